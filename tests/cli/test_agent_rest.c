/* Unit tests for cli/agent_rest: gala-gopher REST requests staged per family, merged as
 * gala-gopher merges them and laid over the command line's options, without probes. */
#include <errno.h>

#include "harness.h"
#include "bpf/probes.h"
#include "bpf/threads.h"
#include "cli/agent_rest.h"
#include "cli/record.h"
#include "model/l7/proto.h"

static struct record_opts base, want;
static char err[512];

/* Stages text for the family at path and keeps it (as an applied request). */
static int put(struct agent_rest *r, const char *path, const char *text)
{
	int ret = agent_rest__stage(r, agent_rest_family(path), text, strlen(text), &base, &want,
				    err, sizeof(err));

	if (!ret)
		agent_rest__settle(r, true);
	return ret;
}

static void fresh_base(void)
{
	record_opts__init(&base);
	base.types = PROBE_ONCPU | RECORD_TYPE_L7;
	base.sli = true;
	base.pids[base.npids++] = 7;
}

TEST_CASE(families_start_and_stop)
{
	struct agent_rest *r = agent_rest__new(NULL);

	fresh_base();
	CHECK(agent_rest_family("/flamegraph") >= 0 && agent_rest_family("/l7") >= 0 &&
	      agent_rest_family("/tprofiling") >= 0 && agent_rest_family("/sli") >= 0);
	CHECK(agent_rest_family("/tcp") == -1 && agent_rest_family("/") == -1);
	/* gala-gopher's json= form: the stack types of cmd.probe, the others untouched. */
	CHECK(put(r, "/flamegraph", "json={\"cmd\": {\"probe\": [\"offcpu\", \"mem\"]}}") == 0);
	CHECK(want.types == (PROBE_OFFCPU | PROBE_MEM | RECORD_TYPE_L7) && want.sli);
	/* Stopped: the family's bits go, a later request without a state keeps it stopped. */
	CHECK(put(r, "/flamegraph", "{\"state\": \"stopped\"}") == 0);
	CHECK(want.types == RECORD_TYPE_L7);
	CHECK(put(r, "/flamegraph", "{\"params\": {\"svg_dir\": \"/s\"}}") == 0);
	CHECK(want.types == RECORD_TYPE_L7);
	CHECK(put(r, "/flamegraph", "{\"state\": \"running\"}") == 0);
	CHECK(want.types == (PROBE_OFFCPU | PROBE_MEM | RECORD_TYPE_L7));
	/* The other families by their paths. */
	CHECK(put(r, "/sli", "{\"cmd\": {\"probe\": [\"cpu\"]}, \"state\": \"stopped\"}") == 0);
	CHECK(!want.sli);
	CHECK(put(r, "/tprofiling", "{\"cmd\": {\"probe\": [\"syscall_file\"]}, "
				    "\"params\": {\"min_exec_dur\": 50}}") == 0);
	CHECK(want.types == (PROBE_OFFCPU | PROBE_MEM | RECORD_TYPE_L7 | PROBE_THREADS));
	CHECK(want.tl_classes == TL_PROBE_FILE && want.min_dur_us == 50);
	CHECK(put(r, "/l7", "{\"params\": {\"l7_protocol\": [\"redis\"], \"support_ssl\": 0}}") == 0);
	CHECK(want.l7_protocols == 1u << L7_REDIS && want.no_tls);
	CHECK(put(r, "/l7", "{\"state\": \"stopped\"}") == 0);
	CHECK(!(want.types & RECORD_TYPE_L7) && (want.types & PROBE_THREADS));
	agent_rest__free(r);
}

TEST_CASE(params_merge_key_by_key)
{
	struct agent_rest *r = agent_rest__new(NULL);

	fresh_base();
	CHECK(put(r, "/flamegraph", "{\"params\": {\"svg_dir\": \"/a\", \"svg_period\": 60}}") == 0);
	CHECK(put(r, "/flamegraph", "{\"params\": {\"flame_dir\": \"/b\"}}") == 0);
	CHECK_STR(want.svg_dir, "/a");
	CHECK_STR(want.flame_dir, "/b");
	CHECK_NUM(want.period, 60);
	CHECK(want.periodic_svg && want.periodic_folded);
	/* snoopers replace the family's, and join the command line's targets. */
	CHECK(put(r, "/flamegraph", "{\"snoopers\": {\"proc_id\": [42, 43]}}") == 0);
	CHECK(want.npids == 3 && want.pids[0] == 7 && want.pids[1] == 42 && want.pids[2] == 43);
	CHECK(put(r, "/flamegraph", "{\"snoopers\": {\"proc_id\": [44]}}") == 0);
	CHECK(want.npids == 2 && want.pids[1] == 44);
	/* perf_sample_period sets -F. */
	CHECK(put(r, "/flamegraph", "{\"params\": {\"perf_sample_period\": 10}}") == 0);
	CHECK(want.freq == 100);
	CHECK_STR(want.svg_dir, "/a");
	agent_rest__free(r);
}

TEST_CASE(refused_and_undone)
{
	struct agent_rest *r = agent_rest__new(NULL);
	int fg = agent_rest_family("/flamegraph");

	fresh_base();
	CHECK(put(r, "/flamegraph", "{\"params\": {\"svg_dir\": \"/a\"}}") == 0);
	/* A bad request: 400's message names the key; nothing changes. */
	CHECK(put(r, "/flamegraph", "{\"params\": {\"svg_period\": 5}}") == -EINVAL);
	CHECK(strstr(err, "flamegraph: params.svg_period") != NULL);
	CHECK(put(r, "/flamegraph", "json={\"cmd\": ") == -EINVAL);
	CHECK(strstr(err, "flamegraph:1:") != NULL);
	CHECK(put(r, "/l7", "{\"cmd\": {\"probe\": [\"oncpu\"]}}") == -EINVAL);
	CHECK(strstr(err, "unknown l7 probe") != NULL);
	CHECK(put(r, "/sli", "{\"params\": {\"svg_dir\": \"/x\"}}") == -EINVAL);
	CHECK(put(r, "/flamegraph", "{\"state\": \"paused\"}") == -EINVAL);
	CHECK(put(r, "/flamegraph", "") == -EINVAL);
	CHECK(put(r, "/flamegraph", "[]") == -EINVAL);
	/* Staged, then not applied: back to the request before. */
	CHECK(agent_rest__stage(r, fg, "{\"params\": {\"svg_dir\": \"/z\"}}", 29, &base, &want, err,
				sizeof(err)) == 0);
	CHECK_STR(want.svg_dir, "/z");
	agent_rest__settle(r, false);
	CHECK(agent_rest__overlay(r, &base, &want, err, sizeof(err)) == 0);
	CHECK_STR(want.svg_dir, "/a");
	/* A staged request left so is dropped by the next stage and by free. */
	CHECK(agent_rest__stage(r, fg, "{\"params\": {\"svg_dir\": \"/y\"}}", 29, &base, &want, err,
				sizeof(err)) == 0);
	agent_rest__free(r);
}

int main(void)
{
	RUN(families_start_and_stop);
	RUN(params_merge_key_by_key);
	RUN(refused_and_undone);
	HARNESS_EXIT();
}
