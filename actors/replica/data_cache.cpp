// The per-process training-set cache.
#include "actors/replica/data_cache.hpp"

#include <map>
#include <mutex>

#include "messages/errors.hpp"
#include "model/data/data_source.hpp"

namespace troupe {

caf::expected<std::shared_ptr<const dataset>> cached_train_set(const std::string& source) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const dataset>> cache;
  std::lock_guard<std::mutex> guard{mutex};
  auto hit = cache.find(source);
  if (hit != cache.end())
    return hit->second;
  auto loaded = load_data_source(source, data_split::train);
  if (!loaded)
    return to_caf_error(loaded.error());
  auto train = std::make_shared<const dataset>(std::move(*loaded));
  cache.emplace(source, train);
  return train;
}

} // namespace troupe
