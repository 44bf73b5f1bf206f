#include "webhook/node_store.h"

#include "base/clock.h"
#include "base/json_fields.h"
#include "webhook/json_footprint.h"
#include "webhook/node_check.h"

namespace iogate {
namespace {

using std::chrono::milliseconds;

// A map node of std::map<std::string, Entry>: its links and colour, the key, the entry.
constexpr size_t kMapNodeBytes = 96;

milliseconds ms_between(NodeStore::Clock::time_point from, NodeStore::Clock::time_point to) {
  return std::chrono::duration_cast<milliseconds>(to - from);
}

// Sets `name`'s entry in `nodes`, keeping `bytes` their sum: the store's map and a listing's alike.
void put_entry(std::map<std::string, NodeStore::Entry>& nodes, size_t& bytes, std::string name, NodeStore::Entry e) {
  auto [it, added] = nodes.try_emplace(std::move(name));
  if (!added) bytes -= it->second.bytes;
  bytes += e.bytes;
  it->second = std::move(e);
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> last_written(const nlohmann::json& node) {
  std::optional<std::chrono::system_clock::time_point> newest;
  for (const nlohmann::json& f : array_at(object_at(node, "metadata"), "managedFields")) {
    auto t = parse_rfc3339_utc(string_at(f, "time"));
    if (t && (!newest || *t > *newest)) newest = t;
  }
  return newest;
}

nlohmann::json to_json(const NodeStoreState& s) {
  auto ms = [](const std::optional<milliseconds>& d) -> nlohmann::json {
    return d ? nlohmann::json(d->count()) : nlohmann::json(nullptr);
  };
  return {{"nodes", s.nodes},
          {"bytes", s.bytes},
          {"synced", s.synced},
          {"watching", s.watching},
          {"current", s.current},
          {"since_contact_ms", ms(s.since_contact)},
          {"resource_version", s.resource_version},
          {"lists", s.lists},
          {"events", s.events},
          {"bookmarks", s.bookmarks},
          {"last_event_lag_ms", ms(s.last_event_lag)}};
}

NodeStore::NodeStore(milliseconds max_lag) : max_lag_(max_lag) {}

NodeStore::Entry NodeStore::entry_of(const nlohmann::json& node) {
  auto view = std::make_shared<const nlohmann::json>(decision_view(node));
  const std::string& name = (*view)["metadata"]["name"].get_ref<const std::string&>();
  size_t bytes = json_footprint(view->dump()) + kMapNodeBytes + (name.size() > 15 ? name.size() + 1 : 0);
  return Entry{std::move(view), bytes};
}

bool NodeStore::current(Clock::time_point now) const {
  if (!synced_) return false;
  if (watching_) return true;
  return contact_ && now - *contact_ <= max_lag_;
}

NodeStore::Found NodeStore::find(const std::string& name, Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!current(now)) return Found{};
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return Found{Answer::kNotFound, nullptr};
  return Found{Answer::kFound, it->second.view};
}

void NodeStore::Listing::add(const nlohmann::json& node) {
  std::string name = string_at(object_at(node, "metadata"), "name");
  if (name.empty()) return;
  put_entry(nodes, bytes, std::move(name), entry_of(node));
}

void NodeStore::replace(Listing listing, const std::string& resource_version, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);  // released before `listing`, then the old map, is freed
  nodes_.swap(listing.nodes);
  bytes_ = listing.bytes;
  resource_version_ = resource_version;
  synced_ = true;
  contact_ = now;
  ++lists_;
}

void NodeStore::apply(const WatchEvent& e, Clock::time_point now, std::chrono::system_clock::time_point wall) {
  if (e.type == WatchEventType::kError) return;
  const nlohmann::json& metadata = object_at(e.object, "metadata");
  std::string rv = string_at(metadata, "resourceVersion");
  if (e.type == WatchEventType::kBookmark) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!rv.empty()) resource_version_ = std::move(rv);
    contact_ = now;
    ++bookmarks_;
    return;
  }
  std::string name = string_at(metadata, "name");
  std::optional<Entry> entry;
  if (e.type != WatchEventType::kDeleted && !name.empty()) entry = entry_of(e.object);
  std::optional<milliseconds> lag;
  if (auto written = last_written(e.object)) {
    lag = std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(wall - *written));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (entry) {
    put_entry(nodes_, bytes_, std::move(name), std::move(*entry));
  } else if (auto it = nodes_.find(name); it != nodes_.end()) {
    bytes_ -= it->second.bytes;
    nodes_.erase(it);
  }
  if (!rv.empty()) resource_version_ = std::move(rv);
  contact_ = now;
  ++events_;
  if (lag) last_event_lag_ = lag;
}

void NodeStore::watch_opened(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  watching_ = true;
  contact_ = now;
}

void NodeStore::watch_closed(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  // The watch was live until now: the lag bound counts from here.
  if (watching_) contact_ = now;
  watching_ = false;
}

std::string NodeStore::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

NodeStoreState NodeStore::state(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  NodeStoreState s;
  s.nodes = nodes_.size();
  s.bytes = bytes_;
  s.synced = synced_;
  s.watching = watching_;
  s.current = current(now);
  if (contact_) s.since_contact = ms_between(*contact_, now);
  s.resource_version = resource_version_;
  s.lists = lists_;
  s.events = events_;
  s.bookmarks = bookmarks_;
  s.last_event_lag = last_event_lag_;
  return s;
}

}  // namespace iogate
