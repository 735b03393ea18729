// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * overhead.c - what tracing costs, in numbers (account.h): FTN4TRA's net
 * time formula, and the histogram of the stops' cost measured in the run
 * with the estimate fortstat takes from it. Pure arithmetic.
 */
#include "fortstat/account.h"

#include <math.h>

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

/* ---- how sure the correction is ---- */

static void sort_doubles(double *v, size_t n)
{
	/* insertion sort: a handful of batches */
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t k = i;

		for (; k > 0 && v[k - 1] > x; k--)
			v[k] = v[k - 1];
		v[k] = x;
	}
}

static double sorted_median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double acct_spread(double *v, size_t n)
{
	double med;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return 0;
	sort_doubles(v, n);
	med = sorted_median(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - med);
	sort_doubles(v, n);
	return 1.4826 * sorted_median(v, n);
}

double acct_net_uncertainty(uint64_t entries, uint64_t calls_made, double df1, double df2)
{
	double u = (double)entries * fabs(df1) + (double)calls_made * fabs(df2);

	return isfinite(u) ? u : 0;
}

bool acct_uncertain(acct_time_t net_ns, double unc_ns)
{
	if (!(unc_ns > 0))
		return false;
	return unc_ns * 100 > (double)net_ns * ACCT_UNCERTAIN_PCT;
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
