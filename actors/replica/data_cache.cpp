// The per-process training-set cache.
#include "actors/replica/data_cache.hpp"

#include <map>
#include <mutex>

#include "messages/errors.hpp"
#include "model/data/source_registry.hpp"

namespace troupe::detail {

caf::expected<std::shared_ptr<const data_source>> cached_train_set(const std::string& source) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const data_source>> cache;
  std::lock_guard<std::mutex> guard{mutex};
  auto hit = cache.find(source);
  if (hit != cache.end())
    return hit->second;
  auto opened = open_data(source, data_split::train);
  if (!opened)
    return to_caf_error(opened.error());
  cache.emplace(source, *opened);
  return *opened;
}

} // namespace troupe::detail
