// A response body the test feeds (kube/http_transport.h's BodyStream): chunks queued now or
// later from any thread, then an end or a failure that every later read sees again. Scripted
// transports hand one out for each watch they open.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/http_transport.h"

namespace iogate::testing {

struct Feed {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<BodyStream::Chunk> chunks;

  void push(BodyStream::Read read, std::string bytes = "") {
    std::lock_guard<std::mutex> lock(mu);
    chunks.push_back(BodyStream::Chunk{read, std::move(bytes), {}});
    cv.notify_all();
  }
  // One watch event, as the API server writes it: a JSON line.
  void event(const std::string& type, const nlohmann::json& object) {
    push(BodyStream::Read::kData, nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n");
  }
};

class FedBody : public BodyStream {
 public:
  explicit FedBody(std::shared_ptr<Feed> feed) : feed_(std::move(feed)) {}
  Chunk next(std::chrono::milliseconds wait) override {
    std::unique_lock<std::mutex> lock(feed_->mu);
    if (!feed_->cv.wait_for(lock, wait, [&] { return !feed_->chunks.empty(); })) return Chunk{};
    Chunk c = feed_->chunks.front();
    if (c.read != Read::kEnded && c.read != Read::kFailed) feed_->chunks.pop_front();
    return c;
  }

 private:
  std::shared_ptr<Feed> feed_;
};

}  // namespace iogate::testing
