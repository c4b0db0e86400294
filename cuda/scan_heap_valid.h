/*
 * scan_heap_valid.h
 *		Checks of a scan program before it runs: every index within its
 *		arrays, every output within the outputs' memory.
 */
#ifndef GPUEXT_SCAN_HEAP_VALID_H
#define GPUEXT_SCAN_HEAP_VALID_H

/* Whether a program's outputs lie within outs_bytes and its indexes within its arrays (1), else 0. */
static inline int
gpuext_scan_program_valid(const GpuextScanProgram *p, size_t outs_bytes)
{
	if (p->walk_atts > GPUEXT_SCAN_MAX_ATTS || p->ncols > GPUEXT_SCAN_MAX_COLS || p->ncmps > GPUEXT_SCAN_MAX_CMPS ||
		p->nquals > p->ncmps || p->nouts > GPUEXT_SCAN_MAX_OUTS)
		return 0;
	for (int a = 0; a < p->walk_atts; a++)
		if ((p->att_len[a] <= 0 && p->att_len[a] != -1) ||
			(p->att_align[a] != 1 && p->att_align[a] != 2 && p->att_align[a] != 4 && p->att_align[a] != 8))
			return 0;
	for (int c = 0; c < p->ncols; c++)
		if (p->cols[c].att < 0 || p->cols[c].att >= p->walk_atts || (c > 0 && p->cols[c].att <= p->cols[c - 1].att) ||
			p->cols[c].kind > GPUEXT_SCAN_NUMERIC ||
			(p->cols[c].kind == GPUEXT_SCAN_INT &&
			 p->att_len[p->cols[c].att] != 1 && p->att_len[p->cols[c].att] != 2 && p->att_len[p->cols[c].att] != 4 &&
			 p->att_len[p->cols[c].att] != 8) ||
			(p->cols[c].kind == GPUEXT_SCAN_FLOAT4 && p->att_len[p->cols[c].att] != 4) ||
			(p->cols[c].kind == GPUEXT_SCAN_FLOAT8 && p->att_len[p->cols[c].att] != 8))
			return 0;
	for (int i = 0; i < p->ncmps; i++)
		if (p->cmps[i].col >= p->ncols || p->cmps[i].nulltest > GPUEXT_SCAN_IS_NOT_NULL ||
			p->cmps[i].strategy < 1 || p->cmps[i].strategy > GPUEXT_SCAN_NOT_EQUAL || p->cmps[i].or_next > 1 ||
			(!p->cmps[i].nulltest && p->cols[p->cmps[i].col].kind == GPUEXT_SCAN_NULLNESS))
			return 0;
	/* an OR group ends within the WHERE clause or the FILTER it starts in */
	if (p->nquals > 0 && p->cmps[p->nquals - 1].or_next)
		return 0;
	if (p->nregs > GPUEXT_SCAN_MAX_REGS || p->nloads > p->nregs || p->nsteps > p->nregs)
		return 0;
	for (int i = 0; i < p->nloads; i++)
		if (p->loads[i].col >= p->ncols || p->cols[p->loads[i].col].kind == GPUEXT_SCAN_NULLNESS ||
			p->loads[i].dst >= p->nregs || p->loads[i].real > 1 ||
			(p->loads[i].real && p->cols[p->loads[i].col].kind != GPUEXT_SCAN_INT &&
			 p->cols[p->loads[i].col].kind != GPUEXT_SCAN_NUMERIC))
			return 0;
	for (int i = 0; i < p->nsteps; i++)
		if ((p->steps[i].op > GPUEXT_SCAN_SEL && p->steps[i].op != GPUEXT_SCAN_TO_REAL) ||
			(p->steps[i].op == GPUEXT_SCAN_TO_REAL && !p->steps[i].real) || p->steps[i].dst >= p->nregs || p->steps[i].a >= p->nregs ||
			p->steps[i].b >= p->nregs || p->steps[i].real > 1 ||
			(p->steps[i].real && p->steps[i].op == GPUEXT_SCAN_SEL) ||
			(p->steps[i].op == GPUEXT_SCAN_SEL &&
			 (p->steps[i].cmp_first < p->nquals || p->steps[i].cmp_first + p->steps[i].cmp_n > p->ncmps ||
			  (p->steps[i].cmp_n > 0 && p->cmps[p->steps[i].cmp_first + p->steps[i].cmp_n - 1].or_next))))
			return 0;
	for (int c = 0; c < p->ncols; c++)
		if (p->cols[c].kind == GPUEXT_SCAN_BYTES && !p->cols[c].missing_null)
			return 0;
	/* a column's bytes are compared only as text, and text only as = or <> of bytes it holds */
	for (int i = 0; i < p->ncmps; i++)
		if ((p->cols[p->cmps[i].col].kind == GPUEXT_SCAN_BYTES && !p->cmps[i].nulltest) != (p->cmps[i].text != 0) ||
			p->cmps[i].text > GPUEXT_SCAN_TEXT_LIKE || p->cmps[i].tlen > GPUEXT_SCAN_TEXT_BYTES ||
			(p->cmps[i].text && p->cmps[i].text != GPUEXT_SCAN_TEXT_LIKE &&
			 (p->cmps[i].toff + p->cmps[i].tlen > p->cmps[i].tfull ||
									(p->cmps[i].text == GPUEXT_SCAN_TEXT_CONTAINS && p->cmps[i].tfull != p->cmps[i].tlen))) ||
			(p->cmps[i].text && (p->cmps[i].is_float || p->cmps[i].num_up || p->cmps[i].modulus ||
								  (p->cmps[i].strategy != 3 && p->cmps[i].strategy != GPUEXT_SCAN_NOT_EQUAL))))
			return 0;
	/* a LIKE pattern lies within the patterns' bytes */
	if (p->like_used > GPUEXT_SCAN_LIKE_BYTES)
		return 0;
	for (int i = 0; i < p->ncmps; i++)
		if (p->cmps[i].utf8 > 1 ||
			(p->cmps[i].text == GPUEXT_SCAN_TEXT_LIKE && (p->cmps[i].tlen != 0 || p->cmps[i].toff + p->cmps[i].tfull > p->like_used)))
			return 0;
	for (int i = 0; i < p->nloads; i++)
		if (p->cols[p->loads[i].col].kind == GPUEXT_SCAN_BYTES)
			return 0;
	for (int i = 0; i < p->ncmps; i++)
		if (p->cols[p->cmps[i].col].kind == GPUEXT_SCAN_NUMERIC && p->cmps[i].is_float)
			return 0;
	/* a unit of a date (4 bytes) or timestamp (8) column, compared as an integer; times of day of timestamps */
	for (int i = 0; i < p->ncmps; i++)
		if (p->cmps[i].unit != GPUEXT_SCAN_TRUNC_NONE &&
			(p->cmps[i].unit >= GPUEXT_SCAN_UNITS || p->cmps[i].micros > 1 || p->cmps[i].nulltest ||
			 p->cmps[i].is_float || p->cmps[i].text || p->cmps[i].num_up || p->cmps[i].modulus ||
			 p->cols[p->cmps[i].col].kind != GPUEXT_SCAN_INT ||
			 p->att_len[p->cols[p->cmps[i].col].att] != (p->cmps[i].micros ? 8 : 4) ||
			 (!p->cmps[i].micros && gpuext_scan_unit_of_time(p->cmps[i].unit))))
			return 0;
	if (!gpuext_scan_groups_valid(p, outs_bytes) || !gpuext_scan_numeric_valid(p))
		return 0;
	for (int o = 0; o < p->nouts; o++)
	{
		const GpuextScanOut *out = &p->outs[o];

		if (out->col < -1 || out->col >= p->ncols || out->filter_first + out->filter_n > p->ncmps ||
			(out->filter_n > 0 && p->cmps[out->filter_first + out->filter_n - 1].or_next))
			return 0;
		if (out->from_reg > GPUEXT_SCAN_FROM_NUMERIC ||
			(out->from_reg == GPUEXT_SCAN_FROM_DOUBLE &&
			 (out->reg >= p->nregs || (out->value_bytes != 8 && out->value_bytes != 4))))
			return 0;
		if (out->value_bytes == 0)
			continue;
		if (!out->from_reg &&
			(out->col < 0 || p->cols[out->col].kind == GPUEXT_SCAN_NULLNESS || p->cols[out->col].kind == GPUEXT_SCAN_BYTES ||
			 (p->cols[out->col].kind == GPUEXT_SCAN_NUMERIC ? out->value_bytes != 8 :
			  p->att_len[p->cols[out->col].att] != out->value_bytes)))
			return 0;
		if ((out->value_bytes != 2 && out->value_bytes != 4 && out->value_bytes != 8) ||
			out->offset % 8 != 0 || out->offset > outs_bytes ||
			p->out_cap > (outs_bytes - out->offset) / out->value_bytes)
			return 0;
	}
	return 1;
}

#endif							/* GPUEXT_SCAN_HEAP_VALID_H */
