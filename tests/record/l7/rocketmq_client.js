'use strict';
// The RocketMQ workload of tests/record/test_l7_binary.sh: the ali-ons producer (from npm)
// against tests/record/l7/rocketmq_server.py, with its own counts of the remoting requests it
// made (its Channel's invoke and invokeOneway): "requests CODE N", "oneway N", "errors N"
// (responses whose code is not 0, nor 19-21 of the pull flow).
//   node rocketmq_client.js NODE_MODULES NAMESRV_PORT
const path = require('path');
const modules = process.argv[2];
const { Producer, Message } = require(path.join(modules, 'ali-ons'));
const Channel = require(path.join(modules, 'ali-ons/lib/channel'));

const requests = {};
let oneway = 0;
let errors = 0;
const invoke = Channel.prototype.invoke;
Channel.prototype.invoke = async function (command, timeout) {
  requests[command.code] = (requests[command.code] || 0) + 1;
  const response = await invoke.call(this, command, timeout);
  if (response.code !== 0 && (response.code < 19 || response.code > 21)) errors++;
  return response;
};
const invokeOneway = Channel.prototype.invokeOneway;
Channel.prototype.invokeOneway = function (command) {
  oneway++;
  return invokeOneway.call(this, command);
};

async function main() {
  const producer = new Producer({
    nameSrv: '127.0.0.1:' + process.argv[3],
    producerGroup: 'l7-group',
    httpclient: {}, // asked for, used only to find name servers over HTTP (nameSrv is given)
    retryTimesWhenSendFailed: 1,
    heartbeatBrokerInterval: 3600 * 1000,
    pollNameServerInteval: 3600 * 1000,
  });
  await producer.ready();
  let sent = 0;
  for (let i = 0; i < 200; i++) {
    const r = await producer.send(new Message('orders', 'tag', Buffer.from('order ' + i)));
    if (r.sendStatus === 'SEND_OK') sent++;
  }
  for (const topic of [ 'nosuch', 'broken' ]) {
    try {
      await producer.send(new Message(topic, 'tag', Buffer.from('x')));
    } catch (err) {
      // counted from the responses above
    }
  }
  await producer.close();
  for (const code of Object.keys(requests).sort()) console.log('requests', code, requests[code]);
  console.log('oneway', oneway);
  console.log('errors', errors);
  console.log('sent', sent);
  process.exit(0);
}

main().catch(err => {
  console.error(err);
  process.exit(1);
});
