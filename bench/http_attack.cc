// SPDX-License-Identifier: Apache-2.0
#include "bench/http_attack.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <thread>

namespace pathwise::bench {
namespace {

using Clock = std::chrono::steady_clock;

// A TCP connection to 127.0.0.1:port from `from`, with `timeout` on reads
// and writes; -1 on failure.
int ConnectFrom(const std::string& from, int port,
                std::chrono::milliseconds timeout) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from.c_str(), &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

using SslCtx = std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)>;

SslCtx ClientContext() {
  SslCtx ctx(SSL_CTX_new(TLS_client_method()), &SSL_CTX_free);
  // The server is the one under test, not its certificate.
  if (ctx) SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  return ctx;
}

// The first flight of a TLS client (its ClientHello), as bytes to send
// slowly by hand.
std::string ClientHello(SSL_CTX* ctx) {
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr) return "";
  BIO* rbio = BIO_new(BIO_s_mem());
  BIO* wbio = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, rbio, wbio);
  SSL_set_connect_state(ssl);
  SSL_do_handshake(ssl);  // wants to read: the hello is written
  char* data = nullptr;
  const long n = BIO_get_mem_data(wbio, &data);
  std::string hello(data, n > 0 ? static_cast<size_t>(n) : 0);
  SSL_free(ssl);
  ERR_clear_error();
  return hello;
}

// One scrape over a fresh connection; "" on success, else what went wrong.
std::string Scrape(const AttackConfig& c, SSL_CTX* ctx, size_t* body_bytes) {
  const int fd = ConnectFrom(c.scraper, c.port, c.scrape_timeout);
  if (fd < 0) return "connect failed";
  SSL* ssl = nullptr;
  if (c.tls) {
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {
      SSL_free(ssl);
      close(fd);
      ERR_clear_error();
      return "TLS handshake failed";
    }
  }
  const std::string req = "GET " + c.path +
                          " HTTP/1.1\r\nHost: pathwise\r\nAccept-Encoding: "
                          "gzip\r\nConnection: close\r\n\r\n";
  auto write_all = [&](const std::string& s) {
    if (ssl != nullptr) {
      return SSL_write(ssl, s.data(), static_cast<int>(s.size())) ==
             static_cast<int>(s.size());
    }
    return send(fd, s.data(), s.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(s.size());
  };
  std::string resp;
  if (write_all(req)) {
    char buf[65536];
    while (true) {
      const int n = ssl != nullptr
                        ? SSL_read(ssl, buf, sizeof(buf))
                        : static_cast<int>(read(fd, buf, sizeof(buf)));
      if (n <= 0) break;
      resp.append(buf, static_cast<size_t>(n));
    }
  }
  if (ssl != nullptr) SSL_free(ssl);
  close(fd);
  ERR_clear_error();
  if (resp.rfind("HTTP/1.1 200 ", 0) != 0) {
    return "answer: \"" + resp.substr(0, 40) + "\"";
  }
  const size_t end = resp.find("\r\n\r\n");
  const size_t cl = resp.find("Content-Length: ");
  if (end == std::string::npos || cl == std::string::npos || cl > end) {
    return "no Content-Length";
  }
  const size_t want = std::strtoull(resp.c_str() + cl + 16, nullptr, 10);
  if (resp.size() - end - 4 != want) return "short body";
  *body_bytes = want;
  return "";
}

// The silent attacker: `n` sockets that send nothing; each one the server
// closes is closed and opened again.
void Silent(const AttackConfig& c, const std::atomic<bool>& stop,
            std::atomic<int>& opened, std::atomic<int64_t>& connects,
            std::atomic<int64_t>& closed) {
  std::vector<pollfd> fds;
  for (int i = 0; i < c.silent && !stop.load(); ++i) {
    const int fd = ConnectFrom(c.attacker, c.port, std::chrono::seconds(1));
    if (fd >= 0) {
      fds.push_back({fd, POLLIN, 0});
      connects++;
    }
  }
  opened = static_cast<int>(fds.size());
  while (!stop.load()) {
    if (poll(fds.data(), fds.size(), 20) <= 0) continue;
    for (pollfd& p : fds) {
      if (p.revents == 0) continue;
      char buf[512];
      if (recv(p.fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) continue;
      close(p.fd);
      closed++;
      p.fd = ConnectFrom(c.attacker, c.port, std::chrono::seconds(1));
      if (p.fd >= 0) connects++;
      p.revents = 0;
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
}

// The slow attacker: `n` sockets, each sent its payload one byte every
// slow_byte_every, reopened (and started over) when the server closes it.
void Slow(const AttackConfig& c, SSL_CTX* ctx, const std::atomic<bool>& stop,
          std::atomic<int64_t>& connects, std::atomic<int64_t>& closed) {
  const std::string plain = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  struct Conn {
    int fd = -1;
    std::string payload;
    size_t next = 0;
  };
  std::vector<Conn> conns(static_cast<size_t>(c.slow));
  auto open = [&](Conn& k) {
    k.fd = ConnectFrom(c.attacker, c.port, std::chrono::milliseconds(200));
    k.payload = c.tls ? ClientHello(ctx) : plain;
    k.next = 0;
    if (k.fd >= 0) connects++;
  };
  for (Conn& k : conns) open(k);
  while (!stop.load()) {
    std::this_thread::sleep_for(c.slow_byte_every);
    for (Conn& k : conns) {
      char b;
      const ssize_t n = k.fd < 0 ? 0 : recv(k.fd, &b, 1, MSG_DONTWAIT);
      const bool ended =
          n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
      if (k.next == k.payload.size()) k.next = 0;  // and again
      if (ended || (k.next < k.payload.size() &&
                    send(k.fd, &k.payload[k.next], 1,
                         MSG_NOSIGNAL | MSG_DONTWAIT) != 1)) {
        if (k.fd >= 0) {
          close(k.fd);
          closed++;
        }
        open(k);
        continue;
      }
      ++k.next;
    }
  }
  for (Conn& k : conns) {
    if (k.fd >= 0) close(k.fd);
  }
}

}  // namespace

double AttackReport::QuantileMs(double q) const {
  if (latency_ms.empty()) return 0;
  const size_t rank = static_cast<size_t>(
      std::ceil(q * static_cast<double>(latency_ms.size())));
  return latency_ms[std::min(latency_ms.size() - 1, rank == 0 ? 0 : rank - 1)];
}

AttackReport RunAttack(const AttackConfig& c) {
  // OpenSSL writes without MSG_NOSIGNAL: a connection the server closed
  // must be an error here, not the end of the process.
  signal(SIGPIPE, SIG_IGN);
  AttackReport r;
  SslCtx ctx = ClientContext();
  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  std::atomic<int64_t> connects{0};
  std::atomic<int64_t> closed{0};
  std::thread silent([&] { Silent(c, stop, opened, connects, closed); });
  std::thread slow([&] { Slow(c, ctx.get(), stop, connects, closed); });
  const Clock::time_point ready_by = Clock::now() + std::chrono::seconds(20);
  while (opened.load() < c.silent && Clock::now() < ready_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  r.silent_open = opened.load();
  for (int i = 0; i < c.scrapes; ++i) {
    const Clock::time_point t0 = Clock::now();
    const std::string error = Scrape(c, ctx.get(), &r.body_bytes);
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (error.empty()) {
      r.latency_ms.push_back(ms);
    } else {
      if (r.failed++ == 0) r.first_failure = error;
    }
    std::this_thread::sleep_for(c.scrape_every);
  }
  stop = true;
  silent.join();
  slow.join();
  r.attacker_connects = connects.load();
  r.closed_by_server = closed.load();
  std::sort(r.latency_ms.begin(), r.latency_ms.end());
  return r;
}

}  // namespace pathwise::bench
