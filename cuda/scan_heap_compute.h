/*
 * scan_heap_compute.h
 *		The device scan's arithmetic for a row that passed the WHERE clause:
 *		double precision and real registers, then numeric ones
 *		(scan_heap_numeric.h), each marked unknown where PostgreSQL raises an
 *		error computing it; the row goes to the CPU only where an output whose
 *		FILTER passes reads an unknown value.  Included by scan_heap.h, for
 *		the kernel and the host alike.
 */
#ifndef GPUEXT_SCAN_HEAP_COMPUTE_H
#define GPUEXT_SCAN_HEAP_COMPUTE_H

/*
 * The arithmetic's registers for a row that passed the WHERE clause, with the
 * checks of float8_pl, float8_mi, float8_mul and float8_div (float4_pl ...
 * for real steps): a register is marked unknown (reg_errs) where PostgreSQL
 * raises an error computing it (overflow, underflow, division by zero) or
 * the device cannot load it, and so is a step with an unknown operand, as
 * PostgreSQL evaluates arguments first.  A strict operator with a NULL
 * operand is NULL.  Single roundings on the device (no contraction into FMA).
 */
static inline GPUEXT_HD void
gpuext_scan_float_compute(const GpuextScanProgram *p, GpuextScanRow *row)
{
	double	   *r = row->regs;

	row->reg_nulls = p->const_nulls;
	row->reg_errs = 0;
	for (int i = 0; i < p->nregs; i++)
		r[i] = p->consts[i];
	for (int i = 0; i < p->nloads; i++)
	{
		const GpuextScanLoad *l = &p->loads[i];

		if (row->nulls & (1u << l->col))
			row->reg_nulls |= 1u << l->dst;
		else if (l->real && p->cols[l->col].kind == GPUEXT_SCAN_NUMERIC)
		{
			if (!gpuext_scan_numeric_real(row->vals[l->col], p->cols[l->col].scale, (row->nans >> l->col) & 1u,
										  &r[l->dst]))
				row->reg_errs |= 1u << l->dst;
		}
		else if (l->real)
			r[l->dst] = gpuext_scan_int_real(row->vals[l->col]);
		else if (p->cols[l->col].kind != GPUEXT_SCAN_NUMERIC)
			r[l->dst] = gpuext_scan_double(p, row, l->col);
		else if (!gpuext_scan_numeric_double(row->vals[l->col], p->cols[l->col].scale,
											(row->nans >> l->col) & 1u, &r[l->dst]))
			row->reg_errs |= 1u << l->dst;
	}
	for (int i = 0; i < p->nsteps; i++)
	{
		const GpuextScanStep *s = &p->steps[i];
		double		a = r[s->a];
		double		b = s->op == GPUEXT_SCAN_NEG ? 0.0 : r[s->b];
		double		v;

		if (s->op == GPUEXT_SCAN_SEL)
		{
			/* the taken branch's value, NULL and mark: CASE evaluates no other */
			int			taken = gpuext_scan_cmps(p, row, s->cmp_first, s->cmp_n) ? s->a : s->b;

			r[s->dst] = r[taken];
			gpuext_scan_mark_select(&row->reg_nulls, &row->reg_errs, s->dst, taken);
			continue;
		}
		if (gpuext_scan_mark_operands(&row->reg_nulls, &row->reg_errs, s->dst, s->a, s->b, s->op == GPUEXT_SCAN_NEG))
			continue;
		if (gpuext_scan_float_op(s->op, s->real, a, b, &v))
			row->reg_errs |= 1u << s->dst;
		else
			r[s->dst] = v;
	}
}

/*
 * Whether output o's value of row is unknown: its register marked, a
 * numeric register's value past a bigint, or a NaN of a numeric column sent.
 */
static inline GPUEXT_HD int
gpuext_scan_out_unknown(const GpuextScanProgram *p, const GpuextScanRow *row, int o)
{
	const GpuextScanOut *out = &p->outs[o];

	if (out->from_reg == GPUEXT_SCAN_FROM_DOUBLE)
		return (row->reg_errs >> out->reg) & 1u;
	if (out->from_reg == GPUEXT_SCAN_FROM_NUMERIC)
		return ((row->nreg_errs >> out->reg) & 1u) ||
			(!((row->nreg_nulls >> out->reg) & 1u) &&
			 (row->numregs[out->reg] > INT64_MAX || row->numregs[out->reg] < INT64_MIN));
	return out->col >= 0 && out->value_bytes > 0 && ((row->nans >> out->col) & 1u);
}

/*
 * The registers of a row that passed the WHERE clause: 0, or 1 where an
 * output whose FILTER passes has an unknown value, so the CPU redoes the
 * batch.  An error where the FILTER fails is not raised, as PostgreSQL
 * computes an aggregate's argument only for the rows its FILTER passes.
 */
static inline GPUEXT_HD int
gpuext_scan_compute(const GpuextScanProgram *p, GpuextScanRow *row)
{
	gpuext_scan_float_compute(p, row);
	gpuext_scan_numeric_compute(p, row);
	for (int o = 0; o < p->nouts; o++)
		if (gpuext_scan_out_unknown(p, row, o) &&
			gpuext_scan_cmps(p, row, p->outs[o].filter_first, p->outs[o].filter_n))
			return 1;
	return 0;
}

#endif							/* GPUEXT_SCAN_HEAP_COMPUTE_H */
