// A process-wide table of entries by name (factories, descriptors), safe
// from any thread: the one registry behind register_model, register_layer,
// register_data_source, register_device_kind and the update policies.
#pragma once

#include <algorithm>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace troupe::detail {

/// Holds entries by name in the order they were first added. Entries are
/// never removed, so a pointer find_entry() returns stays valid.
template <class Entry>
class named_registry {
public:
  /// Adds `entry` under `name`, or replaces the one there.
  void put(const std::string& name, Entry entry) {
    std::lock_guard<std::mutex> guard{mutex_};
    if (auto* found = locate(name))
      *found = std::move(entry);
    else
      entries_.emplace_back(name, std::move(entry));
  }

  /// Adds `entry` under `name`; false (and nothing changes) when the name is taken.
  bool add(const std::string& name, Entry entry) {
    std::lock_guard<std::mutex> guard{mutex_};
    if (locate(name))
      return false;
    entries_.emplace_back(name, std::move(entry));
    return true;
  }

  /// Returns a copy of the entry under `name`, if any.
  std::optional<Entry> find(const std::string& name) const {
    std::lock_guard<std::mutex> guard{mutex_};
    const Entry* found = locate(name);
    return found ? std::optional<Entry>(*found) : std::nullopt;
  }

  /// Returns the entry under `name`, or null; it stays where it is.
  const Entry* find_entry(const std::string& name) const {
    std::lock_guard<std::mutex> guard{mutex_};
    return locate(name);
  }

  /// Returns the names in the order they were first added.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> guard{mutex_};
    std::vector<std::string> all;
    for (const auto& entry : entries_)
      all.push_back(entry.first);
    return all;
  }

private:
  Entry* locate(const std::string& name) {
    auto found = std::find_if(entries_.begin(), entries_.end(),
                              [&name](const auto& entry) { return entry.first == name; });
    return found == entries_.end() ? nullptr : &found->second;
  }
  const Entry* locate(const std::string& name) const {
    return const_cast<named_registry*>(this)->locate(name);
  }

  mutable std::mutex mutex_;
  std::deque<std::pair<std::string, Entry>> entries_; // push_back keeps references valid
};

} // namespace troupe::detail
