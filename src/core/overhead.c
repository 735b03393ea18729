// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * overhead.c - what tracing costs, in numbers (account.h): FTN4TRA's net
 * time formula, and the histogram of the stops' cost measured in the run
 * with the estimate fortstat takes from it. Pure arithmetic.
 */
#include "fortstat/account.h"

/*
 * gross - entries*f1 - calls_made*f2 in double arithmetic, rounded to the
 * nearest ns and clamped at zero. Exact when f1 and f2 are zero.
 */
acct_time_t acct_net(acct_time_t gross, uint64_t entries, uint64_t calls_made, double f1, double f2)
{
	double o = (double)entries * f1 + (double)calls_made * f2;
	double x;

	if (o == 0)
		return gross;
	x = (double)gross - o;
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551615.0)
		return UINT64_MAX;
	return (acct_time_t)(x + 0.5);
}

/* ---- the stops' cost measured in the run ---- */

void acct_ovh_add(struct acct_ovh *h, double ns)
{
	h->n++;
	h->sum += ns;
	if (ns < 0) {
		h->below++;
		return;
	}
	if (ns >= (double)ACCT_OVH_BIN_NS * ACCT_OVH_BINS) {
		h->above++;
		h->above_sum += ns;
		return;
	}
	h->bins[(size_t)(ns / ACCT_OVH_BIN_NS)]++;
}

double acct_ovh_median(const struct acct_ovh *h)
{
	uint64_t half, seen;

	if (!h->n)
		return 0;
	half = (h->n + 1) / 2;
	seen = h->below;
	if (seen >= half)
		return 0;
	for (size_t i = 0; i < ACCT_OVH_BINS; i++) {
		seen += h->bins[i];
		if (seen >= half)
			return ((double)i + 0.5) * ACCT_OVH_BIN_NS;
	}
	return h->above ? h->above_sum / (double)h->above : 0;
}

double acct_ovh_mean_from(const struct acct_ovh *h, double lo, uint64_t *n)
{
	uint64_t k = h->above;
	double sum = h->above_sum;
	size_t first = lo <= 0 ? 0 : (size_t)(lo / ACCT_OVH_BIN_NS);

	for (size_t i = first; i < ACCT_OVH_BINS; i++) {
		k += h->bins[i];
		sum += (double)h->bins[i] * ((double)i + 0.5) * ACCT_OVH_BIN_NS;
	}
	if (n)
		*n = k;
	return k ? sum / (double)k : 0;
}

double acct_ovh_estimate(const struct acct_ovh *h, bool cpu_clock)
{
	if (!h->n)
		return 0;
	if (!cpu_clock)
		return h->sum / (double)h->n;
	return acct_ovh_mean_from(h, acct_ovh_median(h) / 2, NULL);
}
