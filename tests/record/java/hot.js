// Workload of tests/record/test_java.sh: one hot JS function, run with --perf-basic-prof.
function gtHotLoop(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003;
  return s;
}
const end = Date.now() + Number(process.argv[2]) * 1000;
let sink = 0;
while (Date.now() < end) sink += gtHotLoop(100000);
console.log(sink > 0 ? 'done' : 'done.');
