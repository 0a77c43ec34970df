// The per-process training-set cache.
#include "actors/replica/data_cache.hpp"

#include <map>
#include <mutex>

#include "messages/errors.hpp"

namespace troupe {

caf::expected<std::shared_ptr<const dataset>> cached_train_set(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const dataset>> cache;
  std::lock_guard<std::mutex> guard{mutex};
  auto hit = cache.find(dir);
  if (hit != cache.end())
    return hit->second;
  auto loaded = load_dataset(dir);
  if (!loaded)
    return to_caf_error(loaded.error());
  auto train = std::make_shared<const dataset>(std::move(loaded->train));
  cache.emplace(dir, train);
  return train;
}

} // namespace troupe
