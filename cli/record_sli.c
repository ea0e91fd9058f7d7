/* galatop record --type sli: the SLI outputs, JSON or Prometheus text (the snapshot is
 * record_gtop.c's), every --period or once at the end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "record.h"
#include "export/sli.h"

int record_sli_write(const struct record_opts *o, struct sli *sli,
		     const struct sli_json_periods *periods, bool prom_only)
{
	char host[256] = "";
	int ret = 0;

	gethostname(host, sizeof(host) - 1);
	if (!o->noutputs && !prom_only) {
		if (sli_json_write(stdout, sli, host, periods)) {
			cli_error("cannot write standard output: %s", strerror(errno));
			return 1;
		}
		return 0;
	}
	for (size_t i = 0; i < o->noutputs; i++) {
		const char *path = o->outputs[i], *ext = strrchr(path, '.');
		char tmp[8192];
		FILE *f;
		int r;

		if (!(record_output_family(o, path) & RECORD_FAMILY_SLI) || !strcmp(ext, ".gtop") ||
		    (prom_only && strcmp(ext, ".prom")))
			continue;
		/* Prometheus' textfile collectors must never see a half-written file. */
		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
		f = cli_open_out(strcmp(path, "-") ? tmp : path);
		if (!f) {
			ret = 1;
			continue;
		}
		r = !strcmp(ext, ".prom") ? sli_prom_write(f, sli)
					  : sli_json_write(f, sli, host, periods);
		if (r) {
			cli_error("cannot write %s: %s", path, strerror(-r));
			fclose(f);
			unlink(tmp);
			ret = 1;
			continue;
		}
		if (cli_close_out(f, tmp) || rename(tmp, path)) {
			cli_error("cannot write %s: %s", path, strerror(errno));
			unlink(tmp);
			ret = 1;
		}
	}
	return ret;
}
