#include "eval/sparse.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace kf {
namespace {

// A valid CSR structure: offsets from 0 to nnz, never decreasing; columns in range and strictly
// increasing within each row.
void ExpectValid(const CsrStructure& csr, int64_t rows, int64_t cols, int64_t nnz) {
  ASSERT_EQ(csr.row_ptr.size(), static_cast<size_t>(rows + 1));
  ASSERT_EQ(csr.col_idx.size(), static_cast<size_t>(nnz));
  EXPECT_EQ(csr.row_ptr.front(), 0);
  EXPECT_EQ(csr.row_ptr.back(), nnz);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t begin = csr.row_ptr[r], end = csr.row_ptr[r + 1];
    ASSERT_LE(begin, end) << "row " << r;
    for (int64_t k = begin; k < end; ++k) {
      ASSERT_GE(csr.col_idx[k], 0);
      ASSERT_LT(csr.col_idx[k], cols);
      if (k > begin) {
        ASSERT_LT(csr.col_idx[k - 1], csr.col_idx[k]) << "row " << r;
      }
    }
  }
}

TEST(PowerLawCsr, IsAValidStructure) {
  ExpectValid(PowerLawCsr(1, 1, 1, 3, 1.0), 1, 1, 1);
  ExpectValid(PowerLawCsr(7, 5, 35, 3, 1.0), 7, 5, 35);                  // every element set
  ExpectValid(PowerLawCsr(1000, 300, 20000, 9, 1.2), 1000, 300, 20000);  // capped rows
  ExpectValid(PowerLawCsr(4099, 5001, 65537, 1, 0.0), 4099, 5001, 65537);
  EXPECT_THROW(PowerLawCsr(3, 4, 13, 1, 1.0), std::invalid_argument);
}

TEST(PowerLawCsr, TheSeedDescribesTheMatrix) {
  CsrStructure a = PowerLawCsr(500, 800, 9000, 42, 0.9);
  CsrStructure b = PowerLawCsr(500, 800, 9000, 42, 0.9);
  CsrStructure c = PowerLawCsr(500, 800, 9000, 43, 0.9);
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col_idx, b.col_idx);
  EXPECT_NE(a.col_idx, c.col_idx);
  CsrStructure offsets = PowerLawCsr(500, 800, 9000, 42, 0.9, false);
  EXPECT_EQ(offsets.row_ptr, a.row_ptr);  // the same matrix's offsets, without its columns
  EXPECT_TRUE(offsets.col_idx.empty());
}

TEST(PowerLawCsr, SkewMakesAFewLongRows) {
  auto longest = [](const CsrStructure& csr) {
    int64_t most = 0;
    for (size_t r = 0; r + 1 < csr.row_ptr.size(); ++r)
      most = std::max(most, csr.row_ptr[r + 1] - csr.row_ptr[r]);
    return most;
  };
  // 20 nonzeros per row on average: alike rows stay at 20, skewed ones reach far past it.
  EXPECT_EQ(longest(PowerLawCsr(10000, 10000, 200000, 5, 0.0)), 20);
  EXPECT_GT(longest(PowerLawCsr(10000, 10000, 200000, 5, 1.0)), 2000);
}

}  // namespace
}  // namespace kf
