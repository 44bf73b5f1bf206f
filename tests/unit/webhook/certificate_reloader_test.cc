#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tls_files.h"
#include "webhook/certificate_reloader.h"

using namespace iogate;
using namespace iogate::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct FakeClock {
  std::shared_ptr<Clock::time_point> now = std::make_shared<Clock::time_point>();
  CertificateReloader::Clock fn() const {
    return [now = now] { return *now; };
  }
  void advance(std::chrono::milliseconds d) { *now += d; }
};

std::string load_error(const std::string& cert, const std::string& key) {
  CertificateReloader r({cert, key});
  Status s = r.load();
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().kind == ErrorKind::kUsage);
  CHECK(r.snapshot() == nullptr);
  return s.error().message;
}

}  // namespace

TEST_CASE("certificate reloader: load() gives the pair, its subject, serial and notAfter") {
  std::string a = pki("a");
  CertificateReloader r({a + "/server.crt", a + "/server.key"});
  CHECK(r.snapshot() == nullptr);
  REQUIRE(r.load().ok());
  auto pair = r.snapshot();
  REQUIRE(pair);
  CHECK(pair->subject == "CN=iogate-test-server");
  CHECK(pair->serial == serial_of(a + "/server.crt"));
  auto left = pair->not_after - std::chrono::system_clock::now();
  CHECK(left > 47h);  // pki.sh: -days 2
  CHECK(left <= 48h);
  CHECK(sk_X509_num(pair->chain.get()) == 0);
  CHECK(r.reloads() == 0);
  CHECK(r.current() == pair);
}

TEST_CASE("certificate reloader: a cert file with the chain after the leaf") {
  std::string a = pki("a");
  TempTree dir;
  std::string bundle = dir.write("bundle.crt", slurp(a + "/server.crt") + slurp(a + "/ca.crt"));
  CertificateReloader r({bundle, a + "/server.key"});
  REQUIRE(r.load().ok());
  CHECK(r.snapshot()->subject == "CN=iogate-test-server");
  CHECK(sk_X509_num(r.snapshot()->chain.get()) == 1);
}

TEST_CASE("certificate reloader: startup errors name the flag, the path and why") {
  std::string a = pki("a");
  TempTree dir;
  std::string missing = dir.path("nope.crt");

  std::string m = load_error(missing, a + "/server.key");
  CHECK(m.find("--tls-cert") == 0);
  CHECK(m.find(missing) != std::string::npos);
  CHECK(m.find("No such file") != std::string::npos);

  m = load_error(a + "/server.crt", dir.path("nope.key"));
  CHECK(m.find("--tls-key") == 0);
  CHECK(m.find("No such file") != std::string::npos);

  m = load_error(dir.write("garbage.crt", "not a certificate\n"), a + "/server.key");
  CHECK(m.find("--tls-cert") == 0);
  CHECK(m.find("no PEM certificate") != std::string::npos);

  m = load_error(a + "/server.crt",
                 dir.write("garbage.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"));
  CHECK(m.find("--tls-key") == 0);
  CHECK(m.find("not an unencrypted PEM private key") != std::string::npos);

  SUBCASE("a key that is not the certificate's") {
    m = load_error(a + "/server.crt", a + "/client.key");
    CHECK(m.find("--tls-key " + a + "/client.key: not the private key of the certificate in --tls-cert " + a +
                 "/server.crt") == 0);
  }
  SUBCASE("an encrypted key: refused, not a passphrase prompt") {
    run_shell("openssl pkey -in '" + a + "/server.key' -aes256 -passout pass:secret -out '" + dir.path("enc.key") +
              "'");
    m = load_error(a + "/server.crt", dir.path("enc.key"));
    CHECK(m.find("not an unencrypted PEM private key") != std::string::npos);
  }
  SUBCASE("a chain damaged after the leaf: refused, not served without its intermediate") {
    std::string ca = slurp(a + "/ca.crt");
    std::string truncated = slurp(a + "/server.crt") + ca.substr(0, ca.size() / 2);
    m = load_error(dir.write("truncated.crt", truncated), a + "/server.key");
    CHECK(m.find("damaged PEM after certificate 1") != std::string::npos);
  }
}

TEST_CASE("certificate reloader: a ..data swap is seen once the check interval has passed") {
  std::string a = pki("a");
  issue(a, "webhook-b");
  TempTree dir;
  SecretVolume secret(dir);
  secret.publish_files(a + "/server.crt", a + "/server.key");
  FakeClock clock;
  CertificateReloader r({secret.cert_path(), secret.key_path()}, 10s, clock.fn());
  REQUIRE(r.load().ok());
  auto first = r.current();

  secret.publish_files(a + "/webhook-b.crt", a + "/webhook-b.key");
  clock.advance(9999ms);
  CHECK(r.current() == first);  // not looked at yet
  clock.advance(1ms);
  auto second = r.current();
  CHECK(second != first);
  CHECK(second->subject == "CN=webhook-b");
  CHECK(second->serial == serial_of(a + "/webhook-b.crt"));
  CHECK(r.reloads() == 1);
  CHECK(first->subject == "CN=iogate-test-server");  // a holder's snapshot is untouched

  // The same bytes again (a Secret rewritten with the same data): nothing to install.
  secret.publish_files(a + "/webhook-b.crt", a + "/webhook-b.key");
  clock.advance(10s);
  CHECK(r.current() == second);
  CHECK(r.reloads() == 1);
}

TEST_CASE("certificate reloader: a broken replacement is rejected once and the pair in place kept") {
  std::string a = pki("a");
  std::string c = pki("c");
  issue(a, "webhook-b");
  TempTree dir;
  SecretVolume secret(dir);
  secret.publish_files(a + "/webhook-b.crt", a + "/webhook-b.key");
  CertificateReloader r({secret.cert_path(), secret.key_path()});
  REQUIRE(r.load().ok());
  auto b = r.snapshot();

  secret.publish("-----BEGIN CERTIFICATE-----\ntruncat", slurp(a + "/webhook-b.key"));
  CHECK_FALSE(r.reload_if_changed());
  CHECK(r.rejections() == 1);
  CHECK(r.snapshot() == b);
  CHECK_FALSE(r.reload_if_changed());  // the same broken files: not tried (nor logged) again
  CHECK(r.rejections() == 1);

  // Another CA's certificate with B's key: the two files of a half-done update.
  secret.publish(slurp(c + "/server.crt"), slurp(a + "/webhook-b.key"));
  CHECK_FALSE(r.reload_if_changed());
  CHECK(r.rejections() == 2);
  CHECK(r.snapshot() == b);

  // The key follows: now a pair, from the other CA.
  secret.publish_files(c + "/server.crt", c + "/server.key");
  CHECK(r.reload_if_changed());
  CHECK(r.snapshot()->serial == serial_of(c + "/server.crt"));
  CHECK(r.reloads() == 1);
  CHECK(r.rejections() == 2);
}

TEST_CASE("certificate reloader: files rewritten in place; files gone keep the pair") {
  std::string a = pki("a");
  issue(a, "webhook-b");
  TempTree dir;
  std::string cert = dir.write("tls.crt", slurp(a + "/server.crt"));
  std::string key = dir.write("tls.key", slurp(a + "/server.key"));
  CertificateReloader r({cert, key});
  REQUIRE(r.load().ok());
  CHECK_FALSE(r.reload_if_changed());

  dir.write("tls.crt", slurp(a + "/webhook-b.crt"));
  dir.write("tls.key", slurp(a + "/webhook-b.key"));
  CHECK(r.reload_if_changed());
  CHECK(r.snapshot()->subject == "CN=webhook-b");

  std::filesystem::remove(key);
  CHECK_FALSE(r.reload_if_changed());
  CHECK_FALSE(r.reload_if_changed());
  CHECK(r.rejections() == 1);  // said once
  CHECK(r.snapshot()->subject == "CN=webhook-b");

  dir.write("tls.crt", slurp(a + "/server.crt"));
  dir.write("tls.key", slurp(a + "/server.key"));
  CHECK(r.reload_if_changed());
  CHECK(r.snapshot()->subject == "CN=iogate-test-server");
}

TEST_CASE("certificate reloader: current() from several threads while the files change") {
  std::string a = pki("a");
  issue(a, "webhook-b");
  TempTree dir;
  SecretVolume secret(dir);
  secret.publish_files(a + "/server.crt", a + "/server.key");
  CertificateReloader r({secret.cert_path(), secret.key_path()}, 0ms);  // look on every call
  REQUIRE(r.load().ok());

  std::atomic<bool> done{false};
  std::atomic<int> nulls{0}, calls{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([&] {
      while (!done) {
        auto p = r.current();
        if (!p || p->subject.empty()) ++nulls;
        ++calls;
      }
    });
  }
  // Far faster than any real rotation, so reads do land mid-swap now and then; what matters is
  // that every caller always has a pair and the last one published wins.
  for (int i = 0; i < 20; ++i) {
    bool even = i % 2 == 0;
    secret.publish_files(a + (even ? "/webhook-b.crt" : "/server.crt"), a + (even ? "/webhook-b.key" : "/server.key"));
    std::this_thread::sleep_for(2ms);
  }
  done = true;
  for (auto& t : readers) t.join();
  CHECK(nulls == 0);
  CHECK(calls > 0);
  CHECK(r.reloads() > 0);
  r.reload_if_changed();
  CHECK(r.snapshot()->subject == "CN=iogate-test-server");  // the last one published
}
