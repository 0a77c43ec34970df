// Tests for the IDX reader and the dataset loader: the real slice in
// tests/data loads, and every broken copy of it is a clear error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "model/data/dataset.hpp"
#include "model/data/idx_reader.hpp"
#include "tests/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace troupe;

namespace {

const std::string data_dir = TROUPE_TEST_DATA_DIR;
const std::string train_images_gz = data_dir + "/train-images-idx3-ubyte.gz";
const std::string train_labels_gz = data_dir + "/train-labels-idx1-ubyte.gz";
const std::string test_images_gz = data_dir + "/t10k-images-idx3-ubyte.gz";
const std::string test_labels_gz = data_dir + "/t10k-labels-idx1-ubyte.gz";

using bytes = std::vector<uint8_t>;

using testing::temp_dir;

bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const bytes& content) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
  REQUIRE(out);
}

void put_be32(bytes& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(v >> shift));
}

void patch_be32(bytes& content, size_t offset, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    content[offset + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// The uncompressed IDX bytes of the slice, rebuilt from what the reader loaded
// (the header is the standard one, so this is the original uncompressed file).
bytes plain_images(const std::string& gz_path) {
  auto images = read_idx_images(gz_path);
  REQUIRE(images);
  bytes out;
  put_be32(out, 2051);
  put_be32(out, static_cast<uint32_t>(images->count));
  put_be32(out, static_cast<uint32_t>(images->rows));
  put_be32(out, static_cast<uint32_t>(images->cols));
  out.insert(out.end(), images->pixels.begin(), images->pixels.end());
  return out;
}

bytes plain_labels(const std::string& gz_path) {
  auto labels = read_idx_labels(gz_path);
  REQUIRE(labels);
  bytes out;
  put_be32(out, 2049);
  put_be32(out, static_cast<uint32_t>(labels->size()));
  out.insert(out.end(), labels->begin(), labels->end());
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Checks the error code and that the message names the file and the problem.
template <class T>
void check_error(const expected<T>& result, errc code, const std::string& file_name,
                 const std::string& problem) {
  REQUIRE_FALSE(result);
  INFO("message: " << result.error().message);
  CHECK(result.error().code == code);
  CHECK(contains(result.error().message, file_name));
  CHECK(contains(result.error().message, problem));
}

} // namespace

// -- the real slice -----------------------------------------------------------

TEST_CASE("the test slice loads as 2000 training and 500 test samples of 28x28 pixels",
          "[data][dataset]") {
  auto pair = load_dataset(data_dir);
  REQUIRE(pair);
  CHECK(pair->train.count == 2000);
  CHECK(pair->test.count == 500);
  for (const dataset* set : {&pair->train, &pair->test}) {
    CHECK(set->features == 784);
    CHECK(set->classes == 10);
    REQUIRE(set->inputs.size() == static_cast<size_t>(set->count) * 784);
    REQUIRE(set->labels.size() == static_cast<size_t>(set->count));
    auto [lo, hi] = std::minmax_element(set->inputs.begin(), set->inputs.end());
    CHECK(*lo == 0.0f);
    CHECK(*hi == 1.0f);
    CHECK(std::all_of(set->labels.begin(), set->labels.end(),
                      [](int32_t label) { return label >= 0 && label < 10; }));
  }
}

TEST_CASE("every class appears in both splits of the test slice", "[data][dataset]") {
  auto pair = load_dataset(data_dir);
  REQUIRE(pair);
  for (const dataset* set : {&pair->train, &pair->test}) {
    std::vector<int> per_class(10, 0);
    for (int32_t label : set->labels)
      ++per_class[static_cast<size_t>(label)];
    CHECK(*std::min_element(per_class.begin(), per_class.end()) >= set->count / 20);
  }
}

TEST_CASE("pixels are the file's bytes divided by 255", "[data][dataset]") {
  auto images = read_idx_images(test_images_gz);
  REQUIRE(images);
  CHECK(images->rows == 28);
  CHECK(images->cols == 28);
  auto split = load_split(test_images_gz, test_labels_gz);
  REQUIRE(split);
  for (size_t i = 0; i < images->pixels.size(); i += 97)
    CHECK(split->inputs[i] == static_cast<float>(images->pixels[i]) / 255.0f);
}

TEST_CASE("plain uncompressed files load the same data as the gz files", "[data][dataset]") {
  temp_dir dir;
  for (const char* name : {"train-images-idx3-ubyte", "t10k-images-idx3-ubyte"})
    write_bytes(dir.file(name), plain_images(data_dir + "/" + name + ".gz"));
  for (const char* name : {"train-labels-idx1-ubyte", "t10k-labels-idx1-ubyte"})
    write_bytes(dir.file(name), plain_labels(data_dir + "/" + name + ".gz"));
  auto from_plain = load_dataset(dir.path.string());
  auto from_gz = load_dataset(data_dir);
  REQUIRE(from_plain);
  REQUIRE(from_gz);
  CHECK(from_plain->train.inputs == from_gz->train.inputs);
  CHECK(from_plain->train.labels == from_gz->train.labels);
  CHECK(from_plain->test.inputs == from_gz->test.inputs);
  CHECK(from_plain->test.labels == from_gz->test.labels);
}

TEST_CASE("load_dataset takes NAME.gz over NAME when both exist", "[data][dataset]") {
  temp_dir dir;
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    fs::copy_file(data_dir + "/" + name + ".gz", dir.file(std::string(name) + ".gz"));
  // Plain files that would not even load: the .gz must be the one read.
  write_bytes(dir.file("train-images-idx3-ubyte"), bytes{1, 2, 3});
  write_bytes(dir.file("t10k-labels-idx1-ubyte"), bytes{});
  auto pair = load_dataset(dir.path.string());
  REQUIRE(pair);
  CHECK(pair->train.count == 2000);
  CHECK(pair->test.count == 500);
}

TEST_CASE("gzip is detected by the file's content, not by its name", "[data][idx]") {
  temp_dir dir;
  fs::copy_file(train_labels_gz, dir.file("labels-without-suffix"));
  write_bytes(dir.file("plain-labels.gz"), plain_labels(train_labels_gz));
  auto gz_content = read_idx_labels(dir.file("labels-without-suffix"));
  auto plain_content = read_idx_labels(dir.file("plain-labels.gz"));
  REQUIRE(gz_content);
  REQUIRE(plain_content);
  CHECK(gz_content->size() == 2000);
  CHECK(*gz_content == *plain_content);
}

TEST_CASE("gather_batch copies the rows and labels named by the indices", "[data][dataset]") {
  auto split = load_split(test_images_gz, test_labels_gz);
  REQUIRE(split);
  const std::vector<uint32_t> indices{499, 0, 7, 7, 250};
  std::vector<float> images(indices.size() * 784, -1.0f);
  std::vector<int32_t> labels(indices.size(), -1);
  gather_batch(*split, indices.data(), indices.size(), images.data(), labels.data());
  for (size_t i = 0; i < indices.size(); ++i) {
    CHECK(labels[i] == split->labels[indices[i]]);
    CHECK(std::equal(images.begin() + static_cast<long>(i * 784),
                     images.begin() + static_cast<long>((i + 1) * 784),
                     split->input(indices[i])));
  }
}

// -- missing files ------------------------------------------------------------

TEST_CASE("idx reader names the file when it does not exist", "[data][idx]") {
  temp_dir dir;
  check_error(read_idx_images(dir.file("no-such-images")), errc::io,
              "no-such-images", "no such file");
  check_error(read_idx_labels(dir.file("no-such-labels")), errc::io,
              "no-such-labels", "no such file");
}

TEST_CASE("idx reader says so when the path is a directory", "[data][idx]") {
  temp_dir dir;
  fs::create_directory(dir.file("a-directory"));
  check_error(read_idx_images(dir.file("a-directory")), errc::io, "a-directory",
              "directory");
}

TEST_CASE("load_dataset lists both names it looked for when a file is missing",
          "[data][dataset]") {
  temp_dir dir;
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte"})
    fs::copy_file(data_dir + "/" + name + ".gz", dir.file(std::string(name) + ".gz"));
  auto pair = load_dataset(dir.path.string());
  check_error(pair, errc::io, "t10k-labels-idx1-ubyte.gz", "looked for");
  CHECK(contains(pair.error().message, dir.file("t10k-labels-idx1-ubyte")));
}

TEST_CASE("load_dataset names the directory when it does not exist", "[data][dataset]") {
  temp_dir dir;
  check_error(load_dataset(dir.file("nowhere")), errc::io, "nowhere",
              "does not exist");
}

// -- wrong headers ------------------------------------------------------------

TEST_CASE("idx reader says a label file is not an image file", "[data][idx]") {
  auto result = read_idx_images(train_labels_gz);
  check_error(result, errc::bad_data, "train-labels-idx1-ubyte.gz",
              "wrong magic number 2049, expected 2051");
  CHECK(contains(result.error().message, "label file"));
}

// Each row damages a plain copy of one slice file, writes it under `file` and
// expects the reader to name the file and the problem (and `also`, if set).
struct damaged_file {
  const char* what;       // what the row checks
  const char* file;
  bool images;            // an image file (else a label file)
  std::function<void(bytes&)> damage;
  const char* problem;
  const char* also;       // a further part of the message, or null
};

TEST_CASE("idx reader names the file and the problem of every damaged header or size",
          "[data][idx]") {
  const std::vector<damaged_file> rows{
    {"a wrong image magic", "bad-magic-images", true,
     [](bytes& b) { b[2] ^= 0xff; }, "wrong magic number", "expected 2051"},
    {"a wrong label magic", "bad-magic-labels", false,
     [](bytes& b) { patch_be32(b, 0, 0x12345678); },
     "wrong magic number 305419896, expected 2049", nullptr},
    {"images with zero rows", "zero-rows", true, [](bytes& b) { patch_be32(b, 8, 0); },
     "zero rows or cols", nullptr},
    {"images with zero cols", "zero-cols", true, [](bytes& b) { patch_be32(b, 12, 0); },
     "zero rows or cols", nullptr},
    {"a header that counts zero images", "zero-count", true,
     [](bytes& b) { patch_be32(b, 4, 0); }, "0 images", nullptr},
    {"image dimensions absurdly large for the file", "huge-rows", true,
     [](bytes& b) { patch_be32(b, 8, 0x00100000); }, "wrong dimensions", nullptr},
    {"an image count absurdly large for the file", "huge-count", true,
     [](bytes& b) { patch_be32(b, 4, 0xffffffff); }, "4294967295 images",
     "enough for 500"},
    {"an image file cut mid-image is truncated", "cut-images", true,
     [](bytes& b) { b.resize(b.size() - 100); }, "truncated", "enough for 499"},
    {"a file cut inside the header is truncated", "cut-header", true,
     [](bytes& b) { b.resize(10); }, "truncated IDX header", nullptr},
    {"an empty file is truncated", "empty-file", false, [](bytes& b) { b.clear(); },
     "truncated", nullptr},
    {"a header with no data after it is truncated", "header-only", false,
     [](bytes& b) { b.resize(8); }, "no data follows", nullptr},
    {"a label file cut short is truncated", "cut-labels", false,
     [](bytes& b) { b.resize(b.size() - 1); }, "truncated", nullptr},
    {"trailing bytes after the images are counted", "long-images", true,
     [](bytes& b) { b.insert(b.end(), {0xde, 0xad, 0xbe}); }, "3 trailing bytes", nullptr},
    {"trailing bytes after the labels are counted", "long-labels", false,
     [](bytes& b) { b.push_back(0); }, "1 trailing bytes", nullptr},
  };
  const auto& row = GENERATE_REF(from_range(rows));
  INFO("row: " << row.what << " (" << row.file << ")");
  temp_dir dir;
  bytes content = row.images ? plain_images(test_images_gz) : plain_labels(test_labels_gz);
  row.damage(content);
  write_bytes(dir.file(row.file), content);
  const auto check = [&](const auto& result) {
    check_error(result, errc::bad_data, row.file, row.problem);
    if (row.also != nullptr)
      CHECK(contains(result.error().message, row.also));
  };
  if (row.images)
    check(read_idx_images(dir.file(row.file)));
  else
    check(read_idx_labels(dir.file(row.file)));
}

// -- images against labels ----------------------------------------------------

TEST_CASE("load_split names both files when image and label counts differ",
          "[data][dataset]") {
  auto result = load_split(train_images_gz, test_labels_gz);
  check_error(result, errc::bad_data, "t10k-labels-idx1-ubyte.gz", "count mismatch");
  CHECK(contains(result.error().message, "train-images-idx3-ubyte.gz"));
  CHECK(contains(result.error().message, "500 labels"));
  CHECK(contains(result.error().message, "2000 images"));
}

TEST_CASE("load_split names the file and the sample when a label is out of range",
          "[data][dataset]") {
  temp_dir dir;
  bytes content = plain_labels(test_labels_gz);
  content[8 + 123] = 10;
  write_bytes(dir.file("label-ten"), content);
  auto result = load_split(test_images_gz, dir.file("label-ten"));
  check_error(result, errc::bad_data, "label-ten", "out of range");
  CHECK(contains(result.error().message, "label 10 of sample 123"));
}

TEST_CASE("load_split rejects a class count outside 1..256", "[data][dataset]") {
  check_error(load_split(test_images_gz, test_labels_gz, 0), errc::invalid_argument,
              "load_split", "classes");
}

// -- gzip corruption ----------------------------------------------------------

TEST_CASE("idx reader reports a CRC mismatch in a gzip file", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content = read_bytes(test_labels_gz);
  content[content.size() - 8] ^= 0x01; // the trailer: CRC-32, then the length
  write_bytes(dir.file("bad-crc.gz"), content);
  auto result = read_idx_labels(dir.file("bad-crc.gz"));
  check_error(result, errc::bad_data, "bad-crc.gz", "gzip data is corrupt");
  CHECK(contains(result.error().message, "CRC"));
}

TEST_CASE("idx reader reports a flipped byte inside compressed data", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content = read_bytes(test_images_gz);
  content[content.size() / 2] ^= 0xff;
  write_bytes(dir.file("flipped.gz"), content);
  check_error(read_idx_images(dir.file("flipped.gz")), errc::bad_data, "flipped.gz",
              "gzip data is corrupt");
}

TEST_CASE("idx reader reports a wrong length in the gzip trailer", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content = read_bytes(test_labels_gz);
  content[content.size() - 1] ^= 0x01;
  write_bytes(dir.file("bad-length.gz"), content);
  check_error(read_idx_labels(dir.file("bad-length.gz")), errc::bad_data,
              "bad-length.gz", "gzip data is corrupt");
}

TEST_CASE("idx reader reports a gzip stream cut in the middle", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content = read_bytes(test_images_gz);
  content.resize(content.size() / 2);
  write_bytes(dir.file("half.gz"), content);
  check_error(read_idx_images(dir.file("half.gz")), errc::bad_data, "half.gz",
              "gzip stream is truncated");
}

TEST_CASE("idx reader reports a gzip stream cut inside its trailer", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content = read_bytes(test_labels_gz);
  content.resize(content.size() - 3);
  write_bytes(dir.file("no-trailer.gz"), content);
  check_error(read_idx_labels(dir.file("no-trailer.gz")), errc::bad_data,
              "no-trailer.gz", "gzip stream is truncated");
}

TEST_CASE("idx reader reports garbage after the gzip magic", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content{0x1f, 0x8b};
  for (int i = 0; i < 64; ++i)
    content.push_back(static_cast<uint8_t>(i * 37 + 11));
  write_bytes(dir.file("garbage.gz"), content);
  check_error(read_idx_labels(dir.file("garbage.gz")), errc::bad_data, "garbage.gz",
              "gzip");
}

TEST_CASE("idx reader reports garbage after the end of the gzip stream", "[data][idx][gzip]") {
  temp_dir dir;
  bytes content = read_bytes(test_labels_gz);
  content.insert(content.end(), {'j', 'u', 'n', 'k'});
  write_bytes(dir.file("junk-after.gz"), content);
  check_error(read_idx_labels(dir.file("junk-after.gz")), errc::bad_data,
              "junk-after.gz", "4 trailing garbage bytes after the gzip stream");
}

TEST_CASE("idx reader reads concatenated gzip members as one file", "[data][idx][gzip]") {
  // `cat a.gz b.gz` is valid gzip; here both halves are the same labels, so
  // the IDX content then has trailing bytes, which proves both were inflated.
  temp_dir dir;
  bytes content = read_bytes(test_labels_gz);
  bytes twice = content;
  twice.insert(twice.end(), content.begin(), content.end());
  write_bytes(dir.file("twice.gz"), twice);
  check_error(read_idx_labels(dir.file("twice.gz")), errc::bad_data, "twice.gz",
              "508 trailing bytes");
}
