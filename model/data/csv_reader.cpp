// Reads CSV files of samples: finds the label column in the header (or skips
// it, for features alone), then parses every row, field by field, naming the
// line and column of the first field that is not a finite number (or not an
// integer label).
#include "model/data/csv_reader.hpp"
#include "model/data/file_bytes.hpp"

#include <cfloat>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <string_view>

namespace troupe::detail {

namespace {

constexpr size_t names_listed = 8; // column names quoted when the label is missing

error format_error(const std::string& path, const std::string& what) {
  return fail(errc::bad_data, path + ": " + what);
}


std::string_view trim(std::string_view field) {
  while (!field.empty() && (field.front() == ' ' || field.front() == '\t'))
    field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\t'))
    field.remove_suffix(1);
  return field;
}

// Returns the line starting at `pos` without its LF or CRLF; moves `pos` past it.
std::string_view next_line(std::string_view text, size_t& pos) {
  size_t end = text.find('\n', pos);
  if (end == std::string_view::npos)
    end = text.size();
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  return line;
}

// Splits a line at its commas into trimmed fields.
void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(trim(line.substr(start)));
      return;
    }
    fields.push_back(trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

// Names a field for an error: "line 5, column 3 ('p1') of sample 3".
std::string where(int line, size_t column, const std::string& name, int sample) {
  return "line " + std::to_string(line) + ", column " + std::to_string(column + 1) + " ('"
         + name + "') of sample " + std::to_string(sample);
}

// The header: column names and which one, if any, holds the labels.
struct csv_header {
  std::vector<std::string> names;
  bool has_label = false;
  size_t label_index = 0;
  bool parse_labels = true; // false: the label column is skipped
  bool float_target = false; // the label column holds float targets
};

std::string list_names(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < names_listed; ++i)
    list += (i > 0 ? ", " : "") + names[i];
  if (names.size() > names_listed)
    list += ", ... (" + std::to_string(names.size()) + " columns)";
  return list;
}

expected<csv_header> parse_header(const std::string& path, std::string_view line,
                                  const std::string& label_column, bool labels) {
  if (line.find('"') != std::string_view::npos)
    return format_error(path, "line 1: quoted fields ('\"') are not supported");
  std::vector<std::string_view> fields;
  split_fields(line, fields);
  csv_header header;
  header.parse_labels = labels;
  bool found = false;
  for (size_t i = 0; i < fields.size(); ++i) {
    header.names.emplace_back(fields[i]);
    if (fields[i].empty())
      return format_error(path, "line 1: column " + std::to_string(i + 1)
                                  + " of the header has no name (an index column written "
                                    "by pandas without index=False?)");
    if (fields[i] != label_column)
      continue;
    if (found)
      return format_error(path, "line 1: the label column '" + label_column
                                  + "' appears twice, as columns "
                                  + std::to_string(header.label_index + 1) + " and "
                                  + std::to_string(i + 1));
    found = true;
    header.label_index = i;
  }
  header.has_label = found;
  if (!found && labels)
    return format_error(path, "line 1: no column named '" + label_column
                                + "' for the labels; the header names "
                                + list_names(header.names));
  if (found && header.names.size() < 2)
    return format_error(path, "line 1: no feature columns besides the label column '"
                                + label_column + "'");
  return header;
}

// Parses a label; the error says what is wrong but not where.
status parse_label(std::string_view field, int32_t& label) {
  if (!field.empty() && field.front() == '+')
    field.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && value >= INT32_MAX))
    return fail(errc::bad_data, "label '" + std::string(field)
                                          + "' is too large: labels must be below 2147483647");
  if (ec != std::errc() || end != field.data() + field.size())
    return fail(errc::bad_data, "label '" + std::string(field) + "' is not an integer");
  if (value < 0)
    return fail(errc::bad_data, "label " + std::to_string(value) + " is negative");
  label = static_cast<int32_t>(value);
  return {};
}

// Tells whether `digits`, out of float range, is tiny rather than huge, and
// then sets `value` to it rounded to a float (zero or a subnormal), as a
// float64 column converted to float32 would give.
bool underflows(std::string_view digits, float& value) {
  double wide = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), wide);
  if (ec == std::errc()) {
    value = static_cast<float>(wide);
    return std::fabs(wide) <= FLT_MAX;
  }
  const size_t exponent = digits.find_first_of("eE");
  if (exponent == std::string_view::npos || exponent + 1 >= digits.size()
      || digits[exponent + 1] != '-')
    return false;
  value = digits.front() == '-' ? -0.0f : 0.0f;
  return true;
}

// Parses a feature; the error says what is wrong but not where.
status parse_feature(std::string_view field, float& out) {
  std::string_view digits = field;
  if (!digits.empty() && digits.front() == '+')
    digits.remove_prefix(1);
  float value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range && end == digits.data() + digits.size()) {
    if (!underflows(digits, value))
      return fail(errc::bad_data, "'" + std::string(field) + "' is out of float range");
    ec = std::errc();
  }
  if (ec != std::errc() || end != digits.data() + digits.size())
    return fail(errc::bad_data, "'" + std::string(field) + "' is not a number");
  if (!std::isfinite(value))
    return fail(errc::bad_data, "value '" + std::string(field) + "' is not finite");
  out = value;
  return {};
}

// Parses the fields of one data row into `table`.
status parse_row(const std::string& path, int line_number,
                 const std::vector<std::string_view>& fields, const csv_header& header,
                 csv_table& table) {
  if (fields.size() != header.names.size())
    return format_error(path, "line " + std::to_string(line_number) + " has "
                                + std::to_string(fields.size()) + " fields but the header has "
                                + std::to_string(header.names.size()));
  for (size_t column = 0; column < fields.size(); ++column) {
    const bool is_label = header.has_label && column == header.label_index;
    if (is_label && !header.parse_labels)
      continue;
    status ok;
    if (fields[column].empty()) {
      ok = fail(errc::bad_data, "the field is empty");
    } else if (is_label && header.float_target) {
      table.targets.push_back(0);
      ok = parse_feature(fields[column], table.targets.back());
    } else if (is_label) {
      table.labels.push_back(0);
      ok = parse_label(fields[column], table.labels.back());
    } else {
      table.values.push_back(0);
      ok = parse_feature(fields[column], table.values.back());
    }
    if (!ok)
      return format_error(path, where(line_number, column, header.names[column], table.count)
                                  + ": " + ok.error().message);
  }
  ++table.count;
  return {};
}

// Drops trailing blank lines and a UTF-8 byte order mark.
std::string_view strip_ends(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    text.remove_prefix(3);
  while (!text.empty() && std::strchr(" \t\r\n", text.back()) != nullptr)
    text.remove_suffix(1);
  return text;
}

// Reads `path`; `labels` says whether the label column must be there and
// is parsed, or is skipped where present.
expected<csv_table> read_table(const std::string& path, const std::string& label_column,
                               bool labels, bool float_target = false) {
  auto content = read_file_bytes(path);
  if (!content)
    return content.error();
  const std::string_view text = strip_ends(
    std::string_view(reinterpret_cast<const char*>(content->data()), content->size()));
  if (text.empty())
    return format_error(path, "is empty: no header row and no data rows");
  size_t pos = 0;
  auto header = parse_header(path, next_line(text, pos), label_column, labels);
  if (!header)
    return header.error();
  header->float_target = float_target;
  csv_table table;
  table.features = static_cast<int>(header->names.size() - (header->has_label ? 1 : 0));
  std::vector<std::string_view> fields;
  for (int line_number = 2; pos <= text.size(); ++line_number) {
    const std::string_view line = next_line(text, pos);
    if (trim(line).empty())
      return format_error(path, "line " + std::to_string(line_number) + " is blank");
    if (line.find('"') != std::string_view::npos)
      return format_error(path, "line " + std::to_string(line_number)
                                  + ": quoted fields ('\"') are not supported");
    if (table.count == INT_MAX)
      return format_error(path, "too many rows: over INT_MAX");
    split_fields(line, fields);
    auto ok = parse_row(path, line_number, fields, *header, table);
    if (!ok)
      return ok.error();
  }
  if (table.count == 0)
    return format_error(path, "no data rows after the header");
  return table;
}

} // namespace

expected<csv_table> read_csv(const std::string& path, const std::string& label_column) {
  return read_table(path, label_column, true);
}

expected<csv_table> read_csv_features(const std::string& path,
                                      const std::string& label_column) {
  return read_table(path, label_column, false);
}

expected<csv_table> read_csv_targets(const std::string& path, const std::string& target_column) {
  return read_table(path, target_column, true, true);
}

} // namespace troupe::detail
