/* libFuzzer target: symbols/go_tls on arbitrary bytes (any executable a process maps is read
 * to tell whether it is a Go program linking crypto/tls). The input is the whole file, given
 * through a memfd. What it finds must lie inside the file: Read's result check, or its RETs
 * within their cap. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/go_tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_tls_info gi;
	int fd = memfd_create("fuzz_go_tls", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size && !go_tls_inspect(fd, &gi)) {
		if (gi.write_off >= size || gi.read_off >= size || gi.read_result_off >= size ||
		    !gi.read_result_off == !gi.nread_rets || gi.nread_rets > GO_TLS_MAX_RETS ||
		    gi.read_result_reg > GO_REG_DI)
			abort();
		for (size_t i = 0; i < gi.nread_rets; i++)
			if (gi.read_rets[i] >= size)
				abort();
	}
	close(fd);
	return 0;
}
