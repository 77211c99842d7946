#include "exporters/civetweb_tls.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>

#include "absl/strings/str_cat.h"

// Generated from exporters/tls_shim/ (tls_shims.cc in the build tree).
extern const unsigned char kTlsShimSsl[];
extern const unsigned long kTlsShimSsl_size;
extern const unsigned char kTlsShimCrypto[];
extern const unsigned long kTlsShimCrypto_size;

namespace pathwise::exporters {
namespace {

// dlopen()s a library held in memory, through a memfd. The handle is kept
// for the life of the process on purpose: civetweb holds function pointers
// into it. The memfd stays open (in `*fd_out`) until the caller has loaded
// both shims: the loader also matches libraries by path, and a second memfd
// reusing a closed one's number would get the first library back.
absl::Status LoadFromMemory(const char* name, const unsigned char* bytes,
                            unsigned long size, int* fd_out) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(
        "TLS shim ", name, ": memfd_create: ", std::strerror(errno)));
  }
  unsigned long done = 0;
  while (done < size) {
    const ssize_t n = write(fd, bytes + done, size - done);
    if (n <= 0) {
      close(fd);
      return absl::InternalError(absl::StrCat("TLS shim ", name, ": write"));
    }
    done += static_cast<unsigned long>(n);
  }
  const std::string path = absl::StrCat("/proc/self/fd/", fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  *fd_out = fd;
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("TLS needs the OpenSSL 3 libraries (Debian: libssl3): ",
                     why != nullptr ? why : "dlopen failed"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PrepareCivetwebTls() {
  // Process-wide by nature: the dynamic loader's state is. Loading twice
  // would be harmless but pointless.
  static std::once_flag once;
  static absl::Status* result = new absl::Status();
  std::call_once(once, [] {
    int crypto_fd = -1, ssl_fd = -1;
    *result = LoadFromMemory("libcrypto.so", kTlsShimCrypto,
                             kTlsShimCrypto_size, &crypto_fd);
    if (result->ok()) {
      *result =
          LoadFromMemory("libssl.so", kTlsShimSsl, kTlsShimSsl_size, &ssl_fd);
    }
    for (int fd : {crypto_fd, ssl_fd}) {
      if (fd >= 0) close(fd);
    }
  });
  return *result;
}

void AppendTlsOptions(
    const TlsServerConfig& tls, const std::string& pem,
    std::vector<std::pair<std::string, std::string>>& options) {
  options.push_back({"ssl_certificate", pem});
  options.push_back(
      {"ssl_protocol_version", absl::StrCat(tls.civet_protocol_version)});
  if (tls.client_auth == ClientAuth::kNoClientCert) return;
  options.push_back({"ssl_ca_file", tls.client_ca_file});
  options.push_back({"ssl_verify_peer",
                     tls.client_auth == ClientAuth::kRequireAndVerifyClientCert
                         ? "yes"
                         : "optional"});
}

absl::StatusOr<int> CombinedPem(const TlsServerConfig& tls) {
  const int fd = memfd_create("pathwise-tls", MFD_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("memfd_create: ", std::strerror(errno)));
  }
  for (const std::string* path : {&tls.key_file, &tls.cert_file}) {
    std::ifstream in(*path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      close(fd);
      return absl::UnavailableError(absl::StrCat("cannot read ", *path));
    }
    text += "\n";
    if (write(fd, text.data(), text.size()) !=
        static_cast<ssize_t>(text.size())) {
      close(fd);
      return absl::InternalError("cannot write the TLS memory file");
    }
  }
  return fd;
}

}  // namespace pathwise::exporters
