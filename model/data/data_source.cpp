// Loads data sets from source strings: tells a directory, an .npy pair and a
// CSV file apart, loads each with its reader, and reconciles a train/test pair.
#include "model/data/data_source.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "model/data/csv_reader.hpp"
#include "model/data/npy_reader.hpp"

namespace troupe::detail {

namespace {

const std::string csv_extension = ".csv";
const std::string label_option = "label=";

std::string lower(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos)
    return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size()
         && lower(text.substr(text.size() - suffix.size())) == suffix;
}


int classes_of(const std::vector<int32_t>& labels) {
  return *std::max_element(labels.begin(), labels.end()) + 1;
}

// A regression set: float targets shaped (samples,) or (samples, width).
expected<dataset> with_npy_targets(npy_features features, const std::string& features_path,
                                   const std::string& targets_path, const npy_array& y) {
  auto targets = npy_targets(targets_path, y);
  if (!targets)
    return targets.error();
  if (targets->count != features.count)
    return fail(errc::bad_data,
                targets_path + ": count mismatch: it holds " + std::to_string(targets->count)
                  + " targets but " + features_path + " holds "
                  + std::to_string(features.count) + " samples");
  dataset result;
  result.count = features.count;
  result.features = features.features;
  result.classes = 0;
  result.inputs = std::move(features.values);
  result.target_width = targets->features;
  result.targets = std::move(targets->values);
  return result;
}

expected<dataset> load_npy_pair(const std::string& features_path,
                                const std::string& labels_path) {
  auto features = read_npy_features(features_path);
  if (!features)
    return features.error();
  auto y = read_npy(labels_path);
  if (!y)
    return y.error();
  if (y->kind == 'f')
    return with_npy_targets(std::move(*features), features_path, labels_path, *y);
  auto labels = read_npy_labels(labels_path);
  if (!labels)
    return labels.error();
  if (labels->size() != static_cast<size_t>(features->count))
    return fail(errc::bad_data,
                labels_path + ": count mismatch: it holds " + std::to_string(labels->size())
                  + " labels but " + features_path + " holds "
                  + std::to_string(features->count) + " samples");
  dataset result;
  result.count = features->count;
  result.features = features->features;
  result.classes = classes_of(*labels);
  result.inputs = std::move(features->values);
  result.labels = std::move(*labels);
  return result;
}

// A CSV source: the file and the name of its label column.
struct csv_source {
  std::string path;
  std::string label_column = "label";
  bool target = false; // :target=COLUMN, a float target
};

// Returns the CSV file and options `source` names, nothing when it names no
// CSV file, or an error for an option this loader does not know.
expected<std::optional<csv_source>> parse_csv_source(const std::string& source) {
  const size_t mark = lower(source).find(csv_extension + ":");
  if (mark == std::string::npos) {
    if (ends_with(source, csv_extension))
      return std::optional<csv_source>(csv_source{source});
    return std::optional<csv_source>();
  }
  csv_source csv{source.substr(0, mark + csv_extension.size())};
  const std::string option = source.substr(mark + csv_extension.size() + 1);
  const std::string target_option = "target=";
  csv.target = option.compare(0, target_option.size(), target_option) == 0;
  if (!csv.target && option.compare(0, label_option.size(), label_option) != 0)
    return fail(errc::invalid_argument,
                "data source '" + source + "': unknown CSV option '" + option
                  + "'; the options are label=COLUMN (data.csv:label=class) and "
                    "target=COLUMN (a float target: data.csv:target=price)");
  csv.label_column = option.substr(csv.target ? target_option.size() : label_option.size());
  if (csv.label_column.empty())
    return fail(errc::invalid_argument,
                "data source '" + source + "': " + (csv.target ? "target=" : "label=")
                  + " names no column");
  return std::optional<csv_source>(csv);
}

expected<dataset> load_csv(const csv_source& csv) {
  auto table = csv.target ? read_csv_targets(csv.path, csv.label_column)
                          : read_csv(csv.path, csv.label_column);
  if (!table)
    return table.error();
  dataset result;
  result.count = table->count;
  result.features = table->features;
  result.inputs = std::move(table->values);
  if (csv.target) {
    result.classes = 0;
    result.target_width = 1;
    result.targets = std::move(table->targets);
    return result;
  }
  result.classes = classes_of(table->labels);
  result.labels = std::move(table->labels);
  return result;
}

// Loads `source` when it names no directory and no CSV file: an .npy pair.
expected<dataset> load_npy_source(const std::string& source) {
  const size_t comma = source.find(',');
  if (comma == std::string::npos) {
    std::error_code ec;
    if (ends_with(source, ".npy"))
      return fail(errc::invalid_argument,
                  "data source '" + source + "' is one .npy file; give the features "
                  "and the labels as a pair: X.npy,y.npy");
    if (!std::filesystem::exists(source, ec))
      return fail(errc::io, source + ": no such directory or file");
    return fail(errc::invalid_argument,
                "data source '" + source + "' is neither a directory of IDX files, "
                "an X.npy,y.npy pair nor a .csv file");
  }
  const std::string features_path = trim(source.substr(0, comma));
  const std::string labels_path = trim(source.substr(comma + 1));
  if (features_path.empty() || labels_path.empty()
      || labels_path.find(',') != std::string::npos)
    return fail(errc::invalid_argument,
                "data source '" + source + "': an .npy source names exactly two files, "
                "features and labels: X.npy,y.npy");
  return load_npy_pair(features_path, labels_path);
}

} // namespace

expected<dataset> load_data_source(const std::string& source, data_split split) {
  if (source.empty())
    return fail(errc::invalid_argument, "the data source is empty");
  std::error_code ec;
  auto csv = parse_csv_source(source);
  if (!csv)
    return csv.error();
  auto loaded = std::filesystem::is_directory(source, ec) ? load_idx_split(source, split)
                : *csv                                   ? load_csv(**csv)
                                                         : load_npy_source(source);
  if (loaded && loaded->source.empty())
    loaded->source = source;
  return loaded;
}

expected<dataset_pair> load_data_pair(const std::string& train_source,
                                      const std::string& test_source) {
  auto train = load_data_source(train_source, data_split::train);
  if (!train)
    return train.error();
  auto test = load_data_source(test_source, data_split::test);
  if (!test)
    return test.error();
  if (train->regression() != test->regression()
      || train->target_width != test->target_width)
    return fail(errc::bad_data,
                "the training data (" + train_source + ") has "
                  + (train->regression() ? std::to_string(train->target_width) + " float targets"
                                         : "class labels")
                  + " but the test data (" + test_source + ") has "
                  + (test->regression() ? std::to_string(test->target_width) + " float targets"
                                        : "class labels"));
  if (train->features != test->features)
    return fail(errc::bad_data,
                "the training data (" + train_source + ") has "
                  + std::to_string(train->features) + " features per sample but the test data ("
                  + test_source + ") has " + std::to_string(test->features));
  return dataset_pair{std::move(*train), std::move(*test)};
}

} // namespace troupe::detail
