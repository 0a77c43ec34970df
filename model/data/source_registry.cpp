// The registry of data source kinds, and open_data over it and the built-in
// sources.
#include "model/data/source_registry.hpp"

#include <cctype>
#include <filesystem>
#include <optional>

#include "common/named_registry.hpp"
#include "model/data/data_source.hpp"

namespace troupe::detail {

namespace {

named_registry<data_source_factory>& table() {
  static named_registry<data_source_factory> instance;
  return instance;
}

bool is_kind_name(const std::string& text) {
  if (text.empty())
    return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      return false;
  return true;
}

std::string kind_of(const std::string& source) { return source.substr(0, source.find(':')); }

std::optional<data_source_factory> find_factory(const std::string& kind) {
  return table().find(kind);
}

// Tells whether `source` reads like "kind:settings" and names no file.
bool looks_registered(const std::string& source) {
  std::error_code ec;
  return source.find(':') != std::string::npos && is_kind_name(kind_of(source))
         && !std::filesystem::exists(source, ec);
}

std::string label_or_target(const data_source& source) {
  return source.regression() ? std::to_string(source.target_width()) + " float targets"
                             : "class labels";
}

} // namespace

bool names_builtin_source(const std::string& source) {
  return !find_factory(kind_of(source)) && !looks_registered(source);
}

expected<source_pair> open_data_pair(const std::string& train_source,
                                     const std::string& test_source) {
  if (names_builtin_source(train_source) && names_builtin_source(test_source)) {
    auto loaded = load_data_pair(train_source, test_source);
    if (!loaded)
      return loaded.error();
    return source_pair{in_memory(std::move(loaded->train)), in_memory(std::move(loaded->test))};
  }
  auto train = open_data(train_source, data_split::train);
  if (!train)
    return train.error();
  auto test = open_data(test_source, data_split::test);
  if (!test)
    return test.error();
  const data_source& a = **train;
  const data_source& b = **test;
  if (a.features() != b.features())
    return fail(errc::bad_data,
                "the training data (" + train_source + ") has " + std::to_string(a.features())
                  + " features per sample but the test data (" + test_source + ") has "
                  + std::to_string(b.features()));
  if (a.target_width() != b.target_width())
    return fail(errc::bad_data,
                "the training data (" + train_source + ") has " + label_or_target(a)
                  + " but the test data (" + test_source + ") has " + label_or_target(b));
  return source_pair{std::move(*train), std::move(*test)};
}

source_pair sources_of(std::shared_ptr<const dataset_pair> data) {
  return source_pair{in_memory(std::shared_ptr<const dataset>(data, &data->train)),
                     in_memory(std::shared_ptr<const dataset>(data, &data->test))};
}

status check_gathered_labels(const data_source& source, const uint32_t* indices,
                             const int32_t* labels, size_t count) {
  const int32_t classes = source.classes();
  for (size_t i = 0; i < count; ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      return fail(errc::bad_data,
                  (source.name().empty() ? std::string("the data source")
                                         : "data source '" + source.name() + "'")
                    + ": sample " + std::to_string(indices[i]) + " has label "
                    + std::to_string(labels[i]) + ", outside [0, " + std::to_string(classes)
                    + ")");
  return {};
}


} // namespace troupe::detail

namespace troupe {

using namespace detail;

status register_data_source(const std::string& kind, data_source_factory factory) {
  if (!is_kind_name(kind))
    return fail(errc::invalid_argument,
                "register_data_source: '" + kind
                  + "' is not a kind name (letters, digits, '_' and '-')");
  if (!factory)
    return fail(errc::invalid_argument,
                "register_data_source: the factory of '" + kind + "' is empty");
  table().put(kind, std::move(factory));
  return {};
}

expected<std::shared_ptr<const data_source>> open_data(const std::string& source,
                                                       data_split split) {
  if (auto factory = find_factory(kind_of(source))) {
    const size_t colon = source.find(':');
    auto opened = (*factory)(colon == std::string::npos ? "" : source.substr(colon + 1), split);
    if (!opened)
      return fail(opened.error().code, "data source '" + source + "': " + opened.error().message);
    if (!*opened)
      return fail(errc::invalid_argument,
                  "data source '" + source + "': its factory returned no source");
    return opened;
  }
  if (looks_registered(source))
    return fail(errc::invalid_argument,
                "data source '" + source + "': no data source is registered as '"
                  + kind_of(source)
                  + "' in this program (register_data_source, in a node program before "
                    "node_main) and no such file exists");
  auto loaded = load_data_source(source, split);
  if (!loaded)
    return loaded.error();
  return in_memory(std::move(*loaded));
}

} // namespace troupe
