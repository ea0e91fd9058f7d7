#include "self_cost.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bpf/progstats.h"
#include "util/clock.h"

#define MAX_PROGS 256 /* galatop loads about 70 */

double self_cost__cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Turns the kernel's statistics on (held while sc->stats_fd is open); false, with the reason in
 * sc->stats_err, when they cannot be. */
static bool stats_hold(struct self_cost *sc)
{
	sc->stats_fd = progstats_enable();
	if (sc->stats_fd >= 0)
		return true;
	sc->stats_err = sc->stats_fd;
	sc->stats_fd = -1;
	return false;
}

/* Reads the programs into the model: closing a window (with the CPU sample) or opening one. */
static void readings(struct self_cost *sc, bool open)
{
	struct cost_reading r[MAX_PROGS];
	int n = progstats_read(r, MAX_PROGS, &sc->model);
	size_t k = n > 0 ? (size_t)n : 0;

	if (open)
		cost__window_open(&sc->model, clock_mono_s(), r, k);
	else
		cost__sample(&sc->model, clock_mono_s(), self_cost__cpu_s(), r, k);
}

void self_cost__sample(struct self_cost *sc)
{
	if (sc->model.period > 0)
		cost__sample(&sc->model, clock_mono_s(), self_cost__cpu_s(), NULL, 0);
	else
		readings(sc, false);
}

void self_cost__sample_all(struct self_cost *sc)
{
	if (sc->model.period > 0 && sc->stats_fd >= 0)
		readings(sc, false);
	else
		self_cost__sample(sc);
}

void self_cost__restart(struct self_cost *sc)
{
	if (sc->model.period > 0 && sc->stats_fd >= 0)
		readings(sc, true);
}

void self_cost__tick(struct self_cost *sc)
{
	double now;

	if (sc->model.period <= 0 || sc->stats_err)
		return;
	now = clock_mono_s();
	if (sc->stats_fd >= 0 && now >= sc->model.win_t0 + COST_WINDOW_S) {
		readings(sc, false);
		close(sc->stats_fd);
		sc->stats_fd = -1;
		sc->next_open = sc->model.win_t0 - COST_WINDOW_S + sc->model.period;
	} else if (sc->stats_fd < 0 && now >= sc->next_open && stats_hold(sc)) {
		readings(sc, true);
	}
}

/* Statistics turned on by the sysctl (kernel.bpf_stats_enabled) count too. */
static bool sysctl_on(void)
{
	char c = 0;
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1';
}

void self_cost__open(struct self_cost *sc, double period)
{
	bool sysctl;

	memset(sc, 0, sizeof(*sc));
	sc->stats_fd = -1;
	if (period != SELF_COST_OFF)
		stats_hold(sc);
	/* Held on by the sysctl, they count all the time. */
	sysctl = sysctl_on();
	sc->model.stats_on = sc->stats_fd >= 0 || sysctl;
	sc->model.period = sc->stats_fd >= 0 && period > COST_WINDOW_S && !sysctl ? period : 0;
	readings(sc, false);
}

void self_cost__close(struct self_cost *sc)
{
	if (!sc)
		return;
	if (sc->stats_fd >= 0)
		close(sc->stats_fd);
	sc->stats_fd = -1;
	cost__free(&sc->model);
}
