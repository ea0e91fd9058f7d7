#include "loadlog.h"

#include <linux/capability.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static __thread char reason[256];

static int catch_warning(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	const char *s = line;

	if (level != LIBBPF_WARN || reason[0])
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (!strncmp(s, "libbpf: ", 8))
		s += 8;
	snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(s, "\n"), s);
	return 0;
}

void loadlog_install(void)
{
	libbpf_set_print(catch_warning);
}

void loadlog_reset(void)
{
	reason[0] = 0;
}

const char *loadlog_reason(void)
{
	return reason;
}

void loadlog_vwarn(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t len = strlen(buf);

	if (len + 2 >= size)
		return;
	vsnprintf(buf + len, size - len - 1, fmt, ap);
	len = strlen(buf);
	if (reason[0])
		snprintf(buf + len, size - len - 1, " (libbpf: %s)", reason);
	strcat(buf, "\n");
	reason[0] = 0;
}

/* Root, or CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN) in the effective set. */
static bool privileged(void)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {0};
	uint64_t eff;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	if (eff & (1ull << CAP_SYS_ADMIN))
		return true;
	return (eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON));
}

int loader_begin(const char *family, char *err, size_t errlen)
{
	if (!privileged()) {
		snprintf(err, errlen,
			 "%snot root: loading BPF programs needs CAP_BPF and CAP_PERFMON (run with sudo)",
			 family);
		return -1;
	}
	loadlog_install();
	loadlog_reset();
	return 0;
}
