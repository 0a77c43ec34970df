// Tests for the data sources beyond IDX: every broken .npy or CSV file, and
// every mismatched pair, is an error naming the file and the problem.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "model/data/data_source.hpp"
#include "model/data/idx_reader.hpp"
#include "model/data/npy_reader.hpp"
#include "tests/model/data_source_files.hpp"
#include "tests/temp_dir.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;
using namespace troupe::testing;

TEST_CASE("a missing file or directory is an io_error naming it", "[data_sources]") {
  temp_dir dir;
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(1,)"), bytes{0});
  check_error(load_data_source(dir.file("none.npy") + "," + dir.file("y.npy"),
                               data_split::train),
              errc::io, dir.file("none.npy"), "no such file");
  check_error(load_data_source(dir.file("none.csv"), data_split::train), errc::io,
              dir.file("none.csv"), "no such file");
  check_error(load_data_source(dir.file("nowhere"), data_split::train), errc::io,
              dir.file("nowhere"), "no such directory or file");
  check_error(load_data_source(dir.path.string(), data_split::test), errc::io,
              dir.path.string(), "missing t10k-images-idx3-ubyte");
}

// One broken features file X.npy, loaded with good labels.
struct broken_npy {
  const char* name;
  std::string dict;
  bytes data;
  const char* problem;
};

TEST_CASE("a broken features .npy is a bad_format error naming the file and the problem",
          "[data_sources]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<broken_npy> cases = {
    {"complex dtype", npy_dict("<c8", "(2, 1)"), bytes(16), "unsupported dtype '<c8' (complex)"},
    {"string dtype", npy_dict("<U5", "(2, 1)"), bytes(40), "unsupported dtype '<U5'"},
    {"integer features", npy_dict("<i4", "(2, 1)"), bytes(8), "integer dtype '<i4'"},
    {"big-endian", npy_dict(">f4", "(2, 1)"), bytes(8), "big-endian dtype '>f4'"},
    {"Fortran order", npy_dict("<f4", "(2, 1)", true), bytes(8), "Fortran order"},
    {"truncated", npy_dict("|u1", "(2, 784)"), bytes(1000), "truncated: shape (2, 784)"},
    {"trailing bytes", npy_dict("|u1", "(2, 1)"), bytes(3), "trailing bytes"},
    {"1-D features", npy_dict("<f4", "(2,)"), bytes(8), "at least 2-D"},
    {"no samples", npy_dict("<f4", "(0, 4)"), bytes(), "no samples"},
    {"NaN", npy_dict("<f4", "(2, 2)"), raw_bytes(std::vector<float>{0, 1, 2, nan}),
     "feature 1 of sample 1 is not finite (nan)"},
    {"Inf", npy_dict("<f4", "(2, 2)"), raw_bytes(std::vector<float>{-inf, 1, 2, 3}),
     "feature 0 of sample 0 is not finite (-inf)"},
    {"too large for a float", npy_dict("<f8", "(2, 1)"), raw_bytes(std::vector<double>{1, 1e300}),
     "sample 1 is not finite as a float"},
    {"missing key", "{'descr': '<f4', 'shape': (2, 1), }", bytes(8),
     "the key 'fortran_order' is missing"},
    {"extra key", npy_dict("<f4", "(2, 1)") + " 'x': 1}", bytes(8), "malformed .npy header"},
    {"unknown key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), 'x': 1, }",
     bytes(8), "unexpected key 'x'"},
    {"duplicate key", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 1)}",
     bytes(8), "'descr' appears twice"},
    {"shape not a tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 1]}", bytes(8),
     "'shape' must be a tuple"},
  };
  for (const broken_npy& row : cases) {
    SECTION(row.name) {
      temp_dir dir;
      write_npy(dir.file("X.npy"), row.dict, row.data);
      write_npy(dir.file("y.npy"), npy_dict("|u1", "(2,)"), bytes{0, 1});
      check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"),
                                   data_split::train),
                  errc::bad_data, dir.file("X.npy"), row.problem);
    }
  }
}

TEST_CASE("a file that is not .npy, or of another version, is a bad_format error",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("X.npy"), "x,label\n1,2\n");
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(1,)"), bytes{0});
  check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train),
              errc::bad_data, dir.file("X.npy"), "not an .npy file");
  write_npy(dir.file("X.npy"), npy_dict("|u1", "(1, 1)"), bytes{0}, 4);
  check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train),
              errc::bad_data, dir.file("X.npy"), "version 4.0");
}

TEST_CASE("bad labels .npy files are bad_format errors naming the file and the problem",
          "[data_sources]") {
  const std::vector<broken_npy> cases = {
    {"2-D labels", npy_dict("|u1", "(2, 1)"), bytes{0, 1}, "labels must be 1-D"},
    {"non-finite float targets", npy_dict("<f4", "(2,)"), bytes{0, 0, 0, 0, 0, 0, 0xc0, 0x7f},
     "of sample 1 is not finite (nan)"},
    {"3-D float targets", npy_dict("<f4", "(2, 1, 1)"), bytes(8), "targets must be 1-D"},
    {"negative", npy_dict("|i1", "(2,)"), bytes{3, 0xff}, "label -1 of sample 1 is negative"},
    {"too large", npy_dict("<u4", "(2,)"), bytes{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
     "label 4294967295 of sample 1 is too large"},
  };
  for (const broken_npy& row : cases) {
    SECTION(row.name) {
      temp_dir dir;
      write_npy(dir.file("X.npy"), npy_dict("|u1", "(2, 1)"), bytes{0, 1});
      write_npy(dir.file("y.npy"), row.dict, row.data);
      check_error(load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"),
                                   data_split::train),
                  errc::bad_data, dir.file("y.npy"), row.problem);
    }
  }
}

TEST_CASE("features and labels of different sample counts name both files and counts",
          "[data_sources]") {
  temp_dir dir;
  write_npy(dir.file("X.npy"), npy_dict("|u1", "(3, 1)"), bytes{0, 1, 2});
  write_npy(dir.file("y.npy"), npy_dict("|u1", "(2,)"), bytes{0, 1});
  auto loaded = load_data_source(dir.file("X.npy") + "," + dir.file("y.npy"), data_split::train);
  check_error(loaded, errc::bad_data, dir.file("y.npy"), "holds 2 labels");
  CHECK(contains(loaded.error().message, dir.file("X.npy") + " holds 3 samples"));
}

// One broken CSV file and what its error must say.
struct broken_csv {
  const char* name;
  std::string content;
  const char* problem;
};

TEST_CASE("a broken CSV is a bad_format error naming the file, the line and the problem",
          "[data_sources]") {
  const std::vector<broken_csv> cases = {
    {"no label column", "a,b\n1,2\n",
     "no column named 'label' for the labels; the header names a, b"},
    {"too few fields", "a,label\n1,2\n3\n", "line 3 has 1 fields but the header has 2"},
    {"too many fields", "a,label\n1,2,4\n", "line 2 has 3 fields but the header has 2"},
    {"non-numeric", "a,b,label\n1,2,0\n1,x2,0\n",
     "line 3, column 2 ('b') of sample 1: 'x2' is not a number"},
    {"empty field", "a,b,label\n1,,0\n",
     "line 2, column 2 ('b') of sample 0: the field is empty"},
    {"NaN", "a,b,label\n1,2,0\n3,nan,1\n",
     "line 3, column 2 ('b') of sample 1: value 'nan' is not finite"},
    {"Inf", "a,label\n-inf,0\n", "of sample 0: value '-inf' is not finite"},
    {"huge", "a,label\n1e39,0\n", "'1e39' is out of float range"},
    {"negative label", "a,label\n1,0\n2,-3\n",
     "line 3, column 2 ('label') of sample 1: label -3 is negative"},
    {"float label", "a,label\n1,2.5\n", "label '2.5' is not an integer"},
    {"quote", "a,label\n\"1\",2\n", "line 2: quoted fields"},
    {"blank line", "a,label\n1,2\n\n3,4\n", "line 3 is blank"},
    {"empty file", "", "is empty"},
    {"only blank lines", " \r\n\n", "is empty"},
    {"no data rows", "a,label\r\n", "no data rows"},
    {"no features", "label\n1\n", "no feature columns"},
    {"unnamed column", ",a,label\n0,1,2\n", "column 1 of the header has no name"},
  };
  for (const broken_csv& row : cases) {
    SECTION(row.name) {
      temp_dir dir;
      write_text(dir.file("data.csv"), row.content);
      check_error(load_data_source(dir.file("data.csv"), data_split::train),
                  errc::bad_data, dir.file("data.csv"), row.problem);
    }
  }
}

TEST_CASE("a CSV source with a bad option, or a lone .npy file, is an invalid_argument",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("data.csv"), "a,label\n1,2\n");
  check_error(load_data_source(dir.file("data.csv") + ":labels=a", data_split::train),
              errc::invalid_argument, "data.csv:labels=a", "unknown CSV option 'labels=a'");
  check_error(load_data_source(dir.file("data.csv") + ":label=", data_split::train),
              errc::invalid_argument, "data.csv:label=", "names no column");
  check_error(load_data_source(dir.file("data.csv") + ":label=b", data_split::train),
              errc::bad_data, dir.file("data.csv"), "no column named 'b'");
  check_error(load_data_source(dir.file("X.npy"), data_split::train),
              errc::invalid_argument, dir.file("X.npy"), "X.npy,y.npy");
  check_error(load_data_source(dir.file("data.csv") + ",a,b", data_split::train),
              errc::invalid_argument, "data.csv,a,b", "exactly two files");
}

TEST_CASE("train and test sets of different feature widths name both sources",
          "[data_sources]") {
  temp_dir dir;
  write_text(dir.file("narrow.csv"), "a,label\n1,2\n");
  auto pair = load_data_pair(test_data_dir(), dir.file("narrow.csv"));
  check_error(pair, errc::bad_data, test_data_dir(), "has 784 features per sample");
  CHECK(contains(pair.error().message, "test data (" + dir.file("narrow.csv") + ") has 1"));
}
