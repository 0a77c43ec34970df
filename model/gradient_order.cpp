// Weight gradients in blocks of rows, wanted rows first.
#include "model/gradient_order.hpp"

#include <algorithm>

namespace troupe::detail {

std::vector<row_block> wanted_rows_first(const std::vector<parameter_span>& wanted,
                                         size_t offset, int in, int out) {
  const size_t width = static_cast<size_t>(out);
  const size_t end = offset + static_cast<size_t>(in) * width;
  std::vector<int> cuts{0, in};
  std::vector<row_block> touched; // each wanted span's rows
  for (const auto& span : wanted) {
    const size_t from = std::max(span.offset, offset);
    const size_t to = std::min(span.offset + span.count, end);
    if (from >= to)
      continue;
    const row_block rows{static_cast<int>((from - offset) / width),
                         static_cast<int>((to - offset + width - 1) / width)};
    touched.push_back(rows);
    cuts.push_back(rows.begin);
    cuts.push_back(rows.end);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<row_block> first, rest;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const row_block block{cuts[i], cuts[i + 1]};
    const bool is_wanted = std::any_of(touched.begin(), touched.end(), [&](row_block rows) {
      return rows.begin < block.end && block.begin < rows.end;
    });
    (is_wanted ? first : rest).push_back(block);
  }
  if (first.empty() || rest.empty())
    return {row_block{0, in}};
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

void weight_gradient_rows(backend& compute, const float* x, const float* delta, int batch,
                          int in, int out, row_block block, float* dw,
                          std::vector<float>& scratch) {
  const int rows = block.end - block.begin;
  if (rows <= 0)
    return;
  scratch.resize(static_cast<size_t>(batch) * rows);
  for (int n = 0; n < batch; ++n)
    std::copy_n(x + static_cast<size_t>(n) * in + block.begin, rows,
                scratch.data() + static_cast<size_t>(n) * rows);
  compute.gemm(true, false, rows, out, batch, 1.0f, scratch.data(), delta, 0.0f,
               dw + static_cast<size_t>(block.begin) * out);
}

} // namespace troupe::detail
