/*
 * harness_report.cuh
 *		The case count the kernel harnesses share: report() records one case,
 *		printing it when it failed or under --verbose.
 */
#ifndef GPUEXT_HARNESS_REPORT_CUH
#define GPUEXT_HARNESS_REPORT_CUH

#include <cstdio>
#include <string>

int			passed = 0;
int			failed = 0;
bool		verbose = false;

/* Record one case's outcome. */
inline void report(bool ok, const std::string &what, const std::string &detail)
{
	if (ok)
		passed++;
	else
		failed++;
	if (!ok || verbose)
		printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
}

#endif
