#include "webhook/node_source.h"

namespace iogate {

nlohmann::json to_json(const NodeSourceCounters& c) {
  return {{"from_watch", c.from_watch}, {"from_get", c.from_get}, {"gets", c.gets}};
}

NodeSource::NodeSource(const NodeStore* store, NodeCache& fallback) : store_(store), fallback_(fallback) {}

NodeView NodeSource::lookup(const std::string& name) {
  if (store_) {
    NodeStore::Found f = store_->find(name, NodeStore::Clock::now());
    if (f.answer != NodeStore::Answer::kStale) {
      ++from_watch_;
      if (f.answer == NodeStore::Answer::kNotFound) return NodeView{false, name, nullptr, ""};
      return NodeView{true, name, *f.node, ""};
    }
  }
  ++from_get_;
  CachedNode c = fallback_.get(name);
  return NodeView{c.found, name, std::move(c.node), c.error};
}

NodeSourceCounters NodeSource::counters() const {
  return NodeSourceCounters{from_watch_.load(), from_get_.load(), fallback_.fetches()};
}

}  // namespace iogate
