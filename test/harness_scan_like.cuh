/*
 * harness_scan_like.cuh
 *		The device scan's LIKE matcher (gpuext_scan_like) against a copy of
 *		PostgreSQL's recursive MatchText (like_match.c, deterministic
 *		collation), on the device and the CPU, over random patterns of %, _,
 *		escapes and multibyte characters and random texts of them, stepping
 *		over UTF-8 characters and over single bytes.  Included after
 *		harness_scan_units.cuh.
 */

/* MatchText's results: a match, none, or none for any longer text (it stops looking). */
#define LIKE_REF_FALSE 0
#define LIKE_REF_TRUE 1
#define LIKE_REF_ABORT (-1)

/* NextChar of like_match.c: one byte, or a UTF-8 character. */
static void like_ref_next(const unsigned char *&t, int &tlen, bool utf8)
{
	do
	{
		t++;
		tlen--;
	} while (utf8 && tlen > 0 && (*t & 0xC0) == 0x80);
}

/* PostgreSQL's MatchText, as like_match.c writes it for a deterministic collation. */
static int like_reference(const unsigned char *t, int tlen, const unsigned char *p, int plen, bool utf8)
{
	if (plen == 1 && *p == '%')
		return LIKE_REF_TRUE;
	while (tlen > 0 && plen > 0)
	{
		if (*p == '\\')
		{
			p++;
			plen--;
			if (*p != *t)
				return LIKE_REF_FALSE;
		}
		else if (*p == '%')
		{
			unsigned char first;

			p++;
			plen--;
			while (plen > 0)
			{
				if (*p == '%')
				{
					p++;
					plen--;
				}
				else if (*p == '_')
				{
					if (tlen <= 0)
						return LIKE_REF_ABORT;
					like_ref_next(t, tlen, utf8);
					p++;
					plen--;
				}
				else
					break;
			}
			if (plen <= 0)
				return LIKE_REF_TRUE;
			first = *p == '\\' ? p[1] : *p;
			while (tlen > 0)
			{
				if (*t == first)
				{
					int			m = like_reference(t, tlen, p, plen, utf8);

					if (m != LIKE_REF_FALSE)
						return m;
				}
				like_ref_next(t, tlen, utf8);
			}
			return LIKE_REF_ABORT;
		}
		else if (*p == '_')
		{
			like_ref_next(t, tlen, utf8);
			p++;
			plen--;
			continue;
		}
		else if (*p != *t)
			return LIKE_REF_FALSE;
		t++;
		tlen--;
		p++;
		plen--;
	}
	if (tlen > 0)
		return LIKE_REF_FALSE;
	while (plen > 0 && *p == '%')
	{
		p++;
		plen--;
	}
	return plen <= 0 ? LIKE_REF_TRUE : LIKE_REF_ABORT;
}

/* Each pair's match on the device: texts and patterns at their offsets in one buffer. */
__global__ void like_kernel(const unsigned char *bytes, const uint32_t *tx, const uint32_t *px, size_t n, int utf8,
							int *out)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	out[i] = gpuext_scan_like(bytes + tx[2 * i], tx[2 * i + 1], bytes + px[2 * i], px[2 * i + 1], utf8);
}

/* A random string of up to max tokens of set. */
static std::string like_random(std::mt19937_64 &rng, const std::vector<std::string> &set, int max)
{
	std::string s;
	int			n = (int) (rng() % (uint64_t) (max + 1));

	for (int i = 0; i < n; i++)
		s += set[rng() % set.size()];
	return s;
}

/*
 * Random (text, pattern) pairs, few-distinct tokens so that some 4% match
 * (a run under 1% or over 99% tells nothing and fails): the device's and
 * the CPU's gpuext_scan_like against the reference (LIKE_REF_TRUE, or not),
 * the outputs poisoned first; for UTF-8 and for
 * single bytes (where é is two characters).  Some pairs are fixed: the
 * empty text and pattern, % alone, an escaped %, _ over a 4-byte character.
 */
void run_scan_like_checks(bool quick, uint64_t seed)
{
	const std::vector<std::string> pat_tokens = {"a", "b", "%", "_", "\\a", "\\%", "\\_", "\\\\", "\xC3\xA9", "\xE2\x82\xAC"};
	const std::vector<std::string> text_tokens = {"a", "b", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9D\x84\x9E", "%", "_", "\\"};
	const size_t n = quick ? 20011 : 200003;
	std::mt19937_64 rng(seed ^ 0x4C494B45ull);
	std::vector<std::string> texts = {"", "", "a", "%", "\xF0\x9D\x84\x9E", "ab", "a\xC3\xA9"};
	std::vector<std::string> pats = {"", "%", "%", "\\%", "_", "a%", "a_"};

	while (texts.size() < n)
	{
		texts.push_back(like_random(rng, text_tokens, 9));
		pats.push_back(like_random(rng, pat_tokens, 7));
	}

	std::string bytes;
	std::vector<uint32_t> tx(2 * n),
				px(2 * n);

	for (size_t i = 0; i < n; i++)
	{
		tx[2 * i] = (uint32_t) bytes.size();
		tx[2 * i + 1] = (uint32_t) texts[i].size();
		bytes += texts[i];
		px[2 * i] = (uint32_t) bytes.size();
		px[2 * i + 1] = (uint32_t) pats[i].size();
		bytes += pats[i];
	}

	unsigned char *d_bytes;
	uint32_t   *d_tx,
			   *d_px;
	int		   *d_out;

	unit_must(cudaMalloc(&d_bytes, bytes.size() + 1), "LIKE text allocation");
	unit_must(cudaMalloc(&d_tx, tx.size() * sizeof(uint32_t)), "LIKE offsets allocation");
	unit_must(cudaMalloc(&d_px, px.size() * sizeof(uint32_t)), "LIKE offsets allocation");
	unit_must(cudaMalloc(&d_out, n * sizeof(int)), "LIKE output allocation");
	unit_must(cudaMemcpy(d_bytes, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload");
	unit_must(cudaMemcpy(d_tx, tx.data(), tx.size() * sizeof(uint32_t), cudaMemcpyHostToDevice), "upload");
	unit_must(cudaMemcpy(d_px, px.data(), px.size() * sizeof(uint32_t), cudaMemcpyHostToDevice), "upload");
	for (int utf8 = 0; utf8 <= 1; utf8++)
	{
		std::vector<int> got(n);
		std::string detail;
		size_t		matches = 0;

		unit_must(cudaMemset(d_out, 0xA5, n * sizeof(int)), "poison");
		like_kernel<<<(unsigned) ((n + 255) / 256), 256>>>(d_bytes, d_tx, d_px, n, utf8, d_out);
		unit_must(cudaGetLastError(), "LIKE kernel");
		unit_must(cudaMemcpy(got.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost), "download");
		for (size_t i = 0; i < n && detail.empty(); i++)
		{
			const unsigned char *t = reinterpret_cast<const unsigned char *>(texts[i].data());
			const unsigned char *p = reinterpret_cast<const unsigned char *>(pats[i].data());
			int			want = like_reference(t, (int) texts[i].size(), p, (int) pats[i].size(), utf8) == LIKE_REF_TRUE;
			int			host = gpuext_scan_like(t, (uint32_t) texts[i].size(), p, (uint32_t) pats[i].size(), utf8);

			matches += want;
			if (got[i] != want || host != want)
				detail = "'" + texts[i] + "' LIKE '" + pats[i] + "': device " + std::to_string(got[i]) + ", CPU " +
					std::to_string(host) + ", reference " + std::to_string(want);
		}
		if (detail.empty() && (matches < n / 100 || matches > n - n / 100))
			detail = std::to_string(matches) + " of " + std::to_string(n) + " pairs match: too few or too many to tell";
		report(detail.empty(), std::string("scan LIKE against MatchText, ") + std::to_string(n) + " pairs, " +
			   (utf8 ? "UTF-8 characters" : "single bytes"), detail);
	}
	cudaFree(d_bytes);
	cudaFree(d_tx);
	cudaFree(d_px);
	cudaFree(d_out);
}
