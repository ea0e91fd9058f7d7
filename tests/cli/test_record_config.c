/* Unit tests for cli/record_config: gala-gopher flamegraph requests -> struct record_opts. */
#include <errno.h>
#include <unistd.h>

#include "harness.h"
#include "bpf/probes.h"
#include "bpf/threads.h"
#include "cli/record.h"
#include "model/l7/proto.h"

static struct record_opts opts;
static char err[512];

/* Parses text (named "t.json") on top of fresh defaults; returns the parser's result. */
static int parse(const char *text)
{
	record_opts__init(&opts);
	err[0] = 'x';
	err[1] = '\0';
	return record_config_parse(text, strlen(text), "t.json", &opts, err, sizeof(err));
}

/* Parses {"params": {"KEY": VALUE}}. */
static int parse_param(const char *key, long long value)
{
	char text[256];

	snprintf(text, sizeof(text), "{\"params\": {\"%s\": %lld}}", key, value);
	return parse(text);
}

/* True when err is exactly "t.json: " + want. */
static int err_is(const char *want)
{
	char full[600];

	snprintf(full, sizeof(full), "t.json: %s", want);
	if (strcmp(err, full)) {
		printf("  err: \"%s\"\n  want: \"%s\"\n", err, full);
		return 0;
	}
	return 1;
}

static const char full_request[] =
	"{\n"
	"  \"cmd\": {\n"
	"    \"bin\": \"/opt/gala-gopher/extend_probes/stackprobe\",\n"
	"    \"check_cmd\": \"\",\n"
	"    \"probe\": [\"oncpu\", \"offcpu\", \"mem\"]\n"
	"  },\n"
	"  \"snoopers\": {\n"
	"    \"proc_id\": [101, 102],\n"
	"    \"proc_name\": [{\"comm\": \"app1\", \"cmdline\": \"java -jar a.b\",\n"
	"                   \"debugging_dir\": \"/usr/lib/debug\"}],\n"
	"    \"pod_id\": [\"pod1\", \"pod2\"],\n"
	"    \"container_id\": [\"container1\", \"\", \"container2\"],\n"
	"    \"custom_labels\": {\"team\": \"perf\"},\n"
	"    \"pod_labels\": [\"app\"]\n"
	"  },\n"
	"  \"params\": {\n"
	"    \"report_period\": 180,\n"
	"    \"res_lower_thr\": 20,\n"
	"    \"res_upper_thr\": 80,\n"
	"    \"report_event\": 1,\n"
	"    \"metrics_type\": [\"raw\", \"telemetry\"],\n"
	"    \"env\": [\"node\"],\n"
	"    \"multi_instance\": 1,\n"
	"    \"native_stack\": 1,\n"
	"    \"pyroscope_server\": \"localhost:4040\",\n"
	"    \"svg_period\": 60,\n"
	"    \"perf_sample_period\": 20,\n"
	"    \"svg_dir\": \"/var/log/gala-gopher/stacktrace\",\n"
	"    \"flame_dir\": \"/var/log/gala-gopher/flamegraph\"\n"
	"  },\n"
	"  \"state\": \"running\"\n"
	"}\n";

TEST_CASE(defaults)
{
	record_opts__init(&opts);
	CHECK(opts.types == 0);
	CHECK(opts.freq == 99);
	CHECK_NUM(opts.duration, 0);
	CHECK(opts.cpu_list[0] == '\0');
	CHECK(opts.min_block_us == 1000);
	CHECK(opts.max_block_us == 0);
	CHECK(opts.periodic_svg && opts.periodic_folded);
	CHECK_STR(opts.out_dir, ".");
	CHECK(!opts.multi_instance && !opts.kernel_only && !opts.user_only);
	CHECK(opts.npids == 0 && opts.ntids == 0 && opts.ncontainers == 0 && opts.npods == 0);
	CHECK(opts.noutputs == 0 && opts.command == NULL);
	CHECK_NUM(opts.period, 0);
	CHECK_STR(opts.comm, "");
	CHECK_STR(opts.svg_dir, "");
}

TEST_CASE(full_request_maps_every_key)
{
	CHECK(parse(full_request) == 0);
	CHECK_STR(err, "");
	CHECK(opts.types == (PROBE_ONCPU | PROBE_OFFCPU | PROBE_MEM));
	CHECK(opts.freq == 50);
	CHECK_NUM(opts.period, 60);
	CHECK(opts.multi_instance);
	CHECK_STR(opts.svg_dir, "/var/log/gala-gopher/stacktrace");
	CHECK_STR(opts.flame_dir, "/var/log/gala-gopher/flamegraph");
	CHECK(opts.npids == 2 && opts.pids[0] == 101 && opts.pids[1] == 102);
	CHECK_STR(opts.comm, "app1");
	CHECK_STR(opts.cmdline, "java -jar a\\.b");
	CHECK(opts.npods == 2);
	CHECK_STR(opts.pods[0], "pod1");
	CHECK_STR(opts.pods[1], "pod2");
	CHECK(opts.ncontainers == 2);
	CHECK_STR(opts.containers[0], "container1");
	CHECK_STR(opts.containers[1], "container2");
	/* What a request cannot say keeps its default. */
	CHECK(!opts.cpu_list[0] && opts.min_block_us == 1000 && opts.state_filter == 0);
	CHECK_STR(opts.out_dir, ".");
	CHECK(opts.ntids == 0 && opts.noutputs == 0);
}

TEST_CASE(empty_object_changes_nothing)
{
	struct record_opts fresh;

	record_opts__init(&fresh);
	CHECK(parse("{}") == 0);
	CHECK(memcmp(&fresh, &opts, sizeof(fresh)) == 0);
	CHECK(parse("{\"cmd\": {}, \"snoopers\": {}, \"params\": {}}") == 0);
	CHECK(parse("{\"cmd\": {\"probe\": []}, \"snoopers\": {\"proc_name\": []}}") == 0);
	CHECK(memcmp(&fresh, &opts, sizeof(fresh)) == 0);
}

TEST_CASE(range_boundaries)
{
	static const struct {
		const char *key;
		long long min, max;
	} ranges[] = {
		{ "perf_sample_period", 10, 1000 },
		{ "svg_period", 30, 600 },
		{ "multi_instance", 0, 1 },
		{ "native_stack", 0, 1 },
		{ "report_period", 5, 600 },
		{ "res_lower_thr", 0, 100 },
		{ "res_upper_thr", 0, 100 },
		{ "report_event", 0, 1 },
	};
	char want[256];

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		long long min = ranges[i].min, max = ranges[i].max;

		CHECK(parse_param(ranges[i].key, min) == 0);
		CHECK(parse_param(ranges[i].key, max) == 0);
		CHECK(parse_param(ranges[i].key, min - 1) == -EINVAL);
		snprintf(want, sizeof(want), "params.%s: %lld is out of range %lld..%lld",
			 ranges[i].key, min - 1, min, max);
		CHECK(err_is(want));
		CHECK(parse_param(ranges[i].key, max + 1) == -EINVAL);
		snprintf(want, sizeof(want), "params.%s: %lld is out of range %lld..%lld",
			 ranges[i].key, max + 1, min, max);
		CHECK(err_is(want));
	}
	CHECK(parse("{\"snoopers\": {\"proc_id\": [1, 4194304]}}") == 0);
	CHECK(parse("{\"snoopers\": {\"proc_id\": [0]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_id[0]: 0 is out of range 1..4194304"));
	CHECK(parse("{\"snoopers\": {\"proc_id\": [7, 4194305]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_id[1]: 4194305 is out of range 1..4194304"));
	CHECK(parse("{\"snoopers\": {\"proc_id\": [-1]}}") == -EINVAL);
}

TEST_CASE(periods_map_to_options)
{
	CHECK(parse_param("perf_sample_period", 10) == 0 && opts.freq == 100);
	CHECK(parse_param("perf_sample_period", 1000) == 0 && opts.freq == 1);
	CHECK(parse_param("perf_sample_period", 30) == 0 && opts.freq == 33);
	CHECK(parse_param("perf_sample_period", 400) == 0 && opts.freq == 3); /* 2.5 rounds up */
	/* 0 asks for the default: galatop's -F stays, gala-gopher's 180 s SVG period. */
	CHECK(parse_param("perf_sample_period", 0) == 0 && opts.freq == 99);
	CHECK(parse_param("svg_period", 0) == 0);
	CHECK_NUM(opts.period, 180);
	CHECK(parse_param("svg_period", 600) == 0);
	CHECK_NUM(opts.period, 600);
	CHECK(parse_param("multi_instance", 0) == 0 && !opts.multi_instance);
	CHECK(parse_param("native_stack", 0) == 0 && opts.no_java_native);
	CHECK(parse_param("native_stack", 1) == 0 && !opts.no_java_native);
}

TEST_CASE(applies_on_top_of_command_line)
{
	struct record_opts o;
	const char *req = "{\"params\": {\"perf_sample_period\": 10},"
			  " \"snoopers\": {\"proc_id\": [3]}}";

	record_opts__init(&o);
	o.freq = 49;
	o.pids[o.npids++] = 1;
	strcpy(o.cpu_list, "0,2");
	CHECK(record_config_parse(req, strlen(req), "t.json", &o, err, sizeof(err)) == 0);
	CHECK(o.freq == 100 && !strcmp(o.cpu_list, "0,2"));
	CHECK(o.npids == 2 && o.pids[0] == 1 && o.pids[1] == 3);
}

TEST_CASE(error_leaves_opts_untouched)
{
	struct record_opts o, before;
	const char *req = "{\"params\": {\"perf_sample_period\": 10, \"svg_dir\": \"/x\"},"
			  " \"snoopers\": {\"proc_id\": [3], \"bogus\": 1}}";

	record_opts__init(&o);
	before = o;
	CHECK(record_config_parse(req, strlen(req), "t.json", &o, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "t.json: snoopers.bogus: unknown key");
	CHECK(memcmp(&o, &before, sizeof(o)) == 0);
}

TEST_CASE(unknown_keys_at_every_level)
{
	CHECK(parse("{\"cmdx\": {}}") == -EINVAL);
	CHECK(err_is("cmdx: unknown key"));
	CHECK(parse("{\"cmd\": {\"binx\": \"\"}}") == -EINVAL);
	CHECK(err_is("cmd.binx: unknown key"));
	CHECK(parse("{\"snoopers\": {\"proc_idx\": [1]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_idx: unknown key"));
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"comm\": \"a\", \"cmd\": \"\"}]}}") ==
	      -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].cmd: unknown key"));
	CHECK(parse("{\"params\": {\"perf_sample_periods\": 10}}") == -EINVAL);
	CHECK(err_is("params.perf_sample_periods: unknown key"));
	/* Keys are case-sensitive. */
	CHECK(parse("{\"State\": \"running\"}") == -EINVAL);
	CHECK(err_is("State: unknown key"));
	/* gala-gopher knows these, but for its other probes. */
	CHECK(parse_param("latency_thr", 100) == -EINVAL);
	CHECK(err_is("params.latency_thr: a parameter of other gala-gopher probes, not of "
		     "flamegraph"));
}

TEST_CASE(hostile_key_names_stay_on_one_line)
{
	CHECK(parse("{\"a\\nb\\u001b[31m\": 1}") == -EINVAL);
	CHECK(err_is("a?b?[31m: unknown key"));
	CHECK(parse("{\"params\": {\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaa\": 1}}") == -EINVAL);
	CHECK(err_is("params.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...: unknown key"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"\\u00e9x\"]}}") == -EINVAL);
	CHECK(err_is("cmd.probe[0]: unknown probe \"??x\" (galatop has oncpu, offcpu, mem, "
		     "l7_bytes_metrics, l7_rpc_metrics, l7_rpc_trace)"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"on\\tcpu\"]}}") == -EINVAL);
	CHECK(err_is("cmd.probe[0]: contains a control character"));
	CHECK(parse("{\"params\": {\"svg_dir\": \"/tmp/a\\nb\"}}") == -EINVAL);
	CHECK(err_is("params.svg_dir: contains a control character"));
}

TEST_CASE(wrong_types)
{
	CHECK(parse("[]") == -EINVAL);
	CHECK(err_is("expected an object, got an array"));
	CHECK(parse("{\"cmd\": \"oncpu\"}") == -EINVAL);
	CHECK(err_is("cmd: expected an object, got a string"));
	CHECK(parse("{\"cmd\": {\"probe\": \"oncpu\"}}") == -EINVAL);
	CHECK(err_is("cmd.probe: expected an array, got a string"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"oncpu\", 1]}}") == -EINVAL);
	CHECK(err_is("cmd.probe[1]: expected a string, got an integer"));
	CHECK(parse("{\"cmd\": {\"bin\": null}}") == -EINVAL);
	CHECK(err_is("cmd.bin: expected a string, got null"));
	CHECK(parse("{\"snoopers\": {\"proc_id\": [\"101\"]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_id[0]: expected an integer, got a string"));
	CHECK(parse("{\"snoopers\": {\"proc_name\": [\"app\"]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0]: expected an object, got a string"));
	CHECK(parse("{\"snoopers\": {\"pod_id\": [1]}}") == -EINVAL);
	CHECK(err_is("snoopers.pod_id[0]: expected a string, got an integer"));
	CHECK(parse("{\"snoopers\": {\"custom_labels\": []}}") == -EINVAL);
	CHECK(err_is("snoopers.custom_labels: expected an object, got an array"));
	CHECK(parse("{\"params\": {\"svg_period\": \"60\"}}") == -EINVAL);
	CHECK(err_is("params.svg_period: expected an integer, got a string"));
	CHECK(parse("{\"params\": {\"perf_sample_period\": 10.5}}") == -EINVAL);
	CHECK(err_is("params.perf_sample_period: expected an integer, got a real number"));
	CHECK(parse("{\"params\": {\"multi_instance\": true}}") == -EINVAL);
	CHECK(err_is("params.multi_instance: expected an integer, got true"));
	CHECK(parse("{\"params\": {\"svg_dir\": 1}}") == -EINVAL);
	CHECK(err_is("params.svg_dir: expected a string, got an integer"));
	CHECK(parse("{\"params\": {\"env\": \"node\"}}") == -EINVAL);
	CHECK(err_is("params.env: expected an array, got a string"));
	CHECK(parse("{\"params\": {\"metrics_type\": [\"raw\", \"cooked\"]}}") == -EINVAL);
	CHECK(err_is("params.metrics_type[1]: \"cooked\" is not one of raw, telemetry"));
	CHECK(parse("{\"state\": 1}") == -EINVAL);
	CHECK(err_is("state: expected a string, got an integer"));
}

/* gala-gopher's l7 request: probes, protocols and TLS. */
TEST_CASE(l7_request)
{
	CHECK(parse("{\"cmd\": {\"probe\": [\"l7_bytes_metrics\", \"l7_rpc_metrics\"]}, "
		    "\"params\": {\"l7_protocol\": [\"http\", \"pgsql\", \"redis\"], "
		    "\"support_ssl\": 0}}") == 0);
	CHECK(opts.types == RECORD_TYPE_L7);
	CHECK(opts.l7_protocols == (1u << L7_HTTP | 1u << L7_PGSQL | 1u << L7_REDIS));
	CHECK(opts.no_tls);
	CHECK(parse("{\"params\": {\"support_ssl\": 1}}") == 0 && !opts.no_tls);
	CHECK(parse("{\"params\": {\"l7_protocol\": [\"http2\", \"grpc\"]}}") == 0);
	CHECK(opts.l7_protocols == (1u << L7_HTTP2 | 1u << L7_GRPC));
	CHECK(parse("{\"params\": {\"l7_protocol\": [\"kafka\"]}}") == -EINVAL);
	CHECK(err_is("params.l7_protocol[0]: galatop does not parse \"kafka\" yet (it has http, "
		     "pgsql, mysql, redis, dns, http2, grpc)"));
	CHECK(parse("{\"params\": {\"l7_protocol\": [\"smtp\"]}}") == -EINVAL);
	CHECK(err_is("params.l7_protocol[0]: unknown protocol \"smtp\" (http, pgsql, mysql, "
		     "redis, dns, http2, grpc)"));
	CHECK(parse("{\"params\": {\"support_ssl\": 2}}") == -EINVAL);
}

TEST_CASE(probes)
{
	CHECK(parse("{\"cmd\": {\"probe\": [\"OffCPU\"]}}") == 0 && opts.types == PROBE_OFFCPU);
	CHECK(parse("{\"cmd\": {\"probe\": [\"mem\", \"mem\"]}}") == 0 && opts.types == PROBE_MEM);
	CHECK(parse("{\"cmd\": {\"probe\": [\"oncpu\", \"io\"]}}") == -EINVAL);
	CHECK(err_is("cmd.probe[1]: galatop has no \"io\" probe (it has oncpu, offcpu, mem)"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"l7_rpc_trace\"]}}") == 0 &&
	      opts.types == RECORD_TYPE_L7);
	CHECK(parse("{\"cmd\": {\"check_cmd\": \"pidof java\"}}") == -EINVAL);
	CHECK(err_is("cmd.check_cmd: galatop runs no check command; leave it empty"));
}

TEST_CASE(state)
{
	CHECK(parse("{\"state\": \"running\"}") == 0);
	CHECK(parse("{\"state\": \"RUNNING\"}") == 0);
	CHECK(parse("{\"state\": \"stopped\"}") == -EINVAL);
	CHECK(err_is("state: \"stopped\" stops a gala-gopher probe; galatop record needs "
		     "\"running\""));
	CHECK(parse("{\"state\": \"stoped\"}") == -EINVAL);
	CHECK(parse("{\"state\": \"paused\"}") == -EINVAL);
	CHECK(err_is("state: \"paused\" is neither running nor stopped"));
}

TEST_CASE(proc_name)
{
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"comm\": \"python3.9\"}]}}") == 0);
	CHECK_STR(opts.comm, "python3.9");
	CHECK_STR(opts.cmdline, "");
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"comm\": \"a\", \"cmdline\": "
		    "\"x[1]*(y)|$z^\\\\\"}]}}") == 0);
	CHECK_STR(opts.cmdline, "x\\[1\\]\\*\\(y\\)\\|\\$z\\^\\\\");
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"comm\": \"a\"}, {\"comm\": \"b\"}]}}") ==
	      -EINVAL);
	CHECK(err_is("snoopers.proc_name: galatop follows one process name, 2 given"));
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"cmdline\": \"x\"}]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].comm: missing"));
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"comm\": \"\"}]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].comm: must not be empty"));
	CHECK(parse("{\"snoopers\": {\"proc_name\": [{\"comm\": \"java|python\"}]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].comm: a pattern; galatop matches one exact process "
		     "name"));
}

/* Builds {"snoopers": {"KEY": [n items]}} into a malloc'ed string. */
static char *targets(const char *key, size_t n, int strings)
{
	size_t cap = 64 + n * 16, len;
	char *s = malloc(cap);

	len = (size_t)snprintf(s, cap, "{\"snoopers\": {\"%s\": [", key);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, strings ? "%s\"c%zu\"" : "%s%zu",
					i ? "," : "", i + 1);
	snprintf(s + len, cap - len, "]}}");
	return s;
}

TEST_CASE(too_many_targets)
{
	static const char *const keys[] = {"proc_id", "container_id", "pod_id"};
	char want[128], *s;

	for (size_t k = 0; k < 3; k++) {
		s = targets(keys[k], RECORD_MAX_TARGETS, k > 0);
		CHECK(parse(s) == 0);
		free(s);
		s = targets(keys[k], RECORD_MAX_TARGETS + 1, k > 0);
		CHECK(parse(s) == -EINVAL);
		snprintf(want, sizeof(want), "snoopers.%s: more than %d targets", keys[k],
			 RECORD_MAX_TARGETS);
		CHECK(err_is(want));
		free(s);
	}
	CHECK(opts.npids == 0 && opts.ncontainers == 0 && opts.npods == 0);
}

/* Parses {"PATH_OPEN": "<n x ch>" PATH_CLOSE}. */
static int parse_long_string(const char *open, size_t n, char ch, const char *close)
{
	size_t cap = strlen(open) + n + strlen(close) + 4;
	char *s = malloc(cap);
	int ret;

	memcpy(s, open, strlen(open));
	memset(s + strlen(open), ch, n);
	snprintf(s + strlen(open) + n, cap - strlen(open) - n, "%s", close);
	ret = parse(s);
	free(s);
	return ret;
}

TEST_CASE(strings_too_long_are_refused)
{
	const char *comm = "{\"snoopers\": {\"proc_name\": [{\"comm\": \"";
	const char *cmdline = "{\"snoopers\": {\"proc_name\": [{\"comm\": \"a\", \"cmdline\": \"";
	const char *cntr = "{\"snoopers\": {\"container_id\": [\"";
	const char *pod = "{\"snoopers\": {\"pod_id\": [\"";
	const char *svg = "{\"params\": {\"svg_dir\": \"";
	const char *flame = "{\"params\": {\"flame_dir\": \"";

	CHECK(parse_long_string(comm, 15, 'c', "\"}]}}") == 0 && strlen(opts.comm) == 15);
	CHECK(parse_long_string(comm, 16, 'c', "\"}]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].comm: 16 bytes, longer than the 15 allowed"));
	CHECK(parse_long_string(cmdline, 255, 'c', "\"}]}}") == 0 && strlen(opts.cmdline) == 255);
	CHECK(parse_long_string(cmdline, 256, 'c', "\"}]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].cmdline: 256 bytes, longer than the 255 allowed"));
	CHECK(parse_long_string(cmdline, 127, '.', "\"}]}}") == 0 && strlen(opts.cmdline) == 254);
	CHECK(parse_long_string(cmdline, 128, '.', "\"}]}}") == -EINVAL);
	CHECK(err_is("snoopers.proc_name[0].cmdline: 256 bytes once escaped as a regular "
		     "expression, longer than the 255 allowed"));
	CHECK(parse_long_string(cntr, 127, 'c', "\"]}}") == 0 && opts.ncontainers == 1);
	CHECK(parse_long_string(cntr, 128, 'c', "\"]}}") == -EINVAL);
	CHECK(err_is("snoopers.container_id[0]: 128 bytes, longer than the 127 allowed"));
	CHECK(parse_long_string(pod, 128, 'c', "\"]}}") == -EINVAL);
	CHECK(parse_long_string(svg, 4095, 'd', "\"}}") == 0 && strlen(opts.svg_dir) == 4095);
	CHECK(parse_long_string(svg, 4096, 'd', "\"}}") == -EINVAL);
	CHECK(err_is("params.svg_dir: 4096 bytes, longer than the 4095 allowed"));
	CHECK(parse_long_string(flame, 4096, 'd', "\"}}") == -EINVAL);
	CHECK(opts.flame_dir[0] == '\0');
}

TEST_CASE(duplicate_keys)
{
	CHECK(parse("{\"state\": \"running\", \"state\": \"running\"}") == -EINVAL);
	CHECK(strncmp(err, "t.json:1:", 9) == 0);
	CHECK(strstr(err, "duplicate object key") != NULL);
	CHECK(parse("{\"params\": {\n \"svg_period\": 60,\n \"svg_period\": 90}}") == -EINVAL);
	CHECK(strncmp(err, "t.json:3:", 9) == 0);
	CHECK(strstr(err, "duplicate object key") != NULL);
}

TEST_CASE(invalid_json_names_line_and_column)
{
	CHECK(parse("{\n  \"state\": running\n}") == -EINVAL);
	CHECK_STR(err, "t.json:2:18: invalid token near 'running'");
	CHECK(parse("{\"params\": {\"svg_period\": 60,}}") == -EINVAL);
	CHECK(strncmp(err, "t.json:1:", 9) == 0);
	CHECK(parse("") == -EINVAL);
	CHECK(strncmp(err, "t.json:", 7) == 0);
	CHECK(parse("{\"res_lower_thr\": 20%}") == -EINVAL); /* as in gala-gopher's own docs */
	CHECK(parse("{\"snoopers\": {\"proc_id\": [99999999999999999999]}}") == -EINVAL);
	CHECK(parse("{\"state\": \"a\\u0000b\"}") == -EINVAL);
	CHECK(parse("{} {}") == -EINVAL);
}

TEST_CASE(hostile_input_does_not_crash)
{
	static const char *const inputs[] = {
		"{\"cmd\": {\"probe\": [[[[[]]]]]}}",
		"{\"snoopers\": {\"proc_name\": [{}]}}",
		"{\"snoopers\": {\"proc_name\": [null]}}",
		"{\"snoopers\": {\"custom_labels\": {\"a\":\"1\",\"b\":\"2\",\"c\":\"3\",\"d\":\"4\","
		"\"e\":\"5\",\"f\":\"6\",\"g\":\"7\",\"h\":\"8\",\"i\":\"9\",\"j\":\"10\",\"k\":\"11\"}"
		"}}",
		"{\"snoopers\": {\"pod_labels\": [1]}}",
		"{\"params\": {\"perf_sample_period\": -9223372036854775808}}",
		"{\"params\": {\"svg_period\": 9223372036854775807}}",
		"{\"params\": {\"metrics_type\": [null]}}",
		"{\"\": 1}",
		"\xff\xfe{}",
	};
	char small[8];
	struct record_opts o;

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		CHECK(parse(inputs[i]) == -EINVAL);
		CHECK(strchr(err, '\n') == NULL && err[0]);
	}
	/* A short or absent error buffer is fine. */
	record_opts__init(&o);
	CHECK(record_config_parse("{\"x\":1}", 7, "t.json", &o, small, sizeof(small)) == -EINVAL);
	CHECK_STR(small, "t.json:");
	CHECK(record_config_parse("{\"x\":1}", 7, "t.json", &o, NULL, 0) == -EINVAL);
	/* Not NUL-terminated: only len bytes are read. */
	CHECK(record_config_parse("{}xxxx", 2, "t.json", &o, err, sizeof(err)) == 0);
}

TEST_CASE(tprofiling_request)
{
	CHECK(parse("{\"cmd\": {\"probe\": [\"oncpu\", \"syscall_file\", \"syscall_lock\"]},"
		    " \"snoopers\": {\"proc_id\": [42]},"
		    " \"params\": {\"min_exec_dur\": 500, \"min_aggr_dur\": 1000},"
		    " \"state\": \"running\"}") == 0);
	CHECK(opts.types == PROBE_THREADS);
	CHECK(opts.tl_classes == (TL_PROBE_ONCPU | TL_PROBE_FILE | TL_PROBE_LOCK));
	CHECK(opts.min_dur_us == 500 && opts.min_aggr_ms == 1000);
	CHECK(opts.npids == 1 && opts.pids[0] == 42);
	CHECK(parse("{\"cmd\": {\"probe\": [\"syscall_net\", \"python_gc\"]}}") == -EINVAL);
	CHECK(strstr(err, "cmd.probe[1]") && strstr(err, "no \"python_gc\" tprofiling probe"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"syscall_bogus\"]}}") == -EINVAL);
	CHECK(strstr(err, "unknown tprofiling probe"));
	/* tprofiling parameters in a flamegraph request say where they belong. */
	CHECK(parse_param("min_exec_dur", 10) == -EINVAL);
	CHECK(strstr(err, "a tprofiling parameter"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"syscall_sched\"]}, \"params\": "
		    "{\"min_aggr_dur\": 0}}") == -EINVAL);
	/* --type threads first: oncpu alone is the timeline's on-CPU class. */
	record_opts__init(&opts);
	opts.types = PROBE_THREADS;
	{
		const char *t = "{\"cmd\": {\"probe\": [\"oncpu\"]}}";

		CHECK(record_config_parse(t, strlen(t), "t.json", &opts, err, sizeof(err)) == 0);
	}
	CHECK(opts.types == PROBE_THREADS && opts.tl_classes == TL_PROBE_ONCPU);
}

TEST_CASE(load_from_file)
{
	char path[] = "/tmp/galatop-config-XXXXXX";
	int fd = mkstemp(path);
	struct record_opts o;

	CHECK(fd >= 0);
	CHECK(write(fd, full_request, strlen(full_request)) == (ssize_t)strlen(full_request));
	close(fd);
	record_opts__init(&o);
	CHECK(record_config_load(path, &o, err, sizeof(err)) == 0);
	CHECK(o.types == (PROBE_ONCPU | PROBE_OFFCPU | PROBE_MEM) && o.npids == 2);
	unlink(path);
	CHECK(record_config_load(path, &o, err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, path) == err && strstr(err, ": No such file or directory"));
	CHECK(record_config_load("/tmp", &o, err, sizeof(err)) < 0);
	CHECK(strncmp(err, "/tmp: ", 6) == 0);
}

/* gala-gopher sli requests (PUT /sli): cpu/mem/io families, report_period as the period,
 * snoopers as targets; flamegraph parameters are refused there. */
TEST_CASE(sli_request)
{
	CHECK(parse("{\"cmd\": {\"probe\": [\"cpu\", \"io\", \"node\", \"container\"]},"
		    " \"snoopers\": {\"proc_id\": [7], \"container_id\": [\"abc\"]},"
		    " \"params\": {\"report_period\": 60}, \"state\": \"running\"}") == 0);
	CHECK(opts.sli && opts.sli_families == (RECORD_SLI_CPU | RECORD_SLI_IO));
	CHECK(opts.period == 60 && opts.npids == 1 && opts.pids[0] == 7 && opts.ncontainers == 1);
	CHECK(opts.types == 0);
	/* "mem" alone is a flamegraph request, unless --type sli came first. */
	CHECK(parse("{\"cmd\": {\"probe\": [\"mem\"]}}") == 0 && !opts.sli && opts.types == PROBE_MEM);
	record_opts__init(&opts);
	opts.sli = true;
	CHECK(record_config_parse("{\"cmd\": {\"probe\": [\"mem\"]}}", 27, "t.json", &opts, err,
				  sizeof(err)) == 0);
	CHECK(opts.sli && opts.sli_families == RECORD_SLI_MEM && opts.types == 0);
	CHECK(parse("{\"cmd\": {\"probe\": [\"cpu\", \"oncpu\"]}}") == -EINVAL &&
	      err_is("cmd.probe[1]: unknown sli probe \"oncpu\" (cpu, mem, io, node, container)"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"cpu\"]}, \"params\": {\"svg_period\": 60}}") == -EINVAL &&
	      err_is("params.svg_period: a flamegraph parameter: the sli probe takes report_period"));
	CHECK(parse("{\"cmd\": {\"probe\": [\"node\"]}, \"params\": {\"report_period\": 4}}") == -EINVAL &&
	      err_is("params.report_period: 4 is out of range 5..600"));
	/* A flamegraph request still checks report_period and ignores it. */
	CHECK(parse_param("report_period", 30) == 0 && opts.period == 0 && !opts.sli);
}

int main(void)
{
	RUN(defaults);
	RUN(full_request_maps_every_key);
	RUN(empty_object_changes_nothing);
	RUN(range_boundaries);
	RUN(periods_map_to_options);
	RUN(applies_on_top_of_command_line);
	RUN(error_leaves_opts_untouched);
	RUN(unknown_keys_at_every_level);
	RUN(hostile_key_names_stay_on_one_line);
	RUN(wrong_types);
	RUN(probes);
	RUN(l7_request);
	RUN(state);
	RUN(proc_name);
	RUN(too_many_targets);
	RUN(strings_too_long_are_refused);
	RUN(duplicate_keys);
	RUN(invalid_json_names_line_and_column);
	RUN(hostile_input_does_not_crash);
	RUN(tprofiling_request);
	RUN(load_from_file);
	RUN(sli_request);
	HARNESS_EXIT();
}
