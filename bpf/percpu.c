#include "percpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

int percpu_sum_u64(const struct bpf_map *m, uint64_t *sum, size_t n)
{
	int ncpus = libbpf_num_possible_cpus();
	uint32_t zero = 0;
	uint64_t *v;
	int err;

	memset(sum, 0, n * sizeof(*sum));
	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	v = calloc((size_t)ncpus * n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(m, &zero, sizeof(zero), v, (size_t)ncpus * n * sizeof(*v), 0);
	if (!err)
		for (int c = 0; c < ncpus; c++)
			for (size_t i = 0; i < n; i++)
				sum[i] += v[(size_t)c * n + i];
	free(v);
	return err;
}
