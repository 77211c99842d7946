/* A stand-in for the unversioned libssl.so / libcrypto.so that Debian's
 * civetweb 1.15 dlopen()s for TLS. That civetweb looks up
 * SSL_get_peer_certificate, which OpenSSL 3 no longer exports (it became a
 * macro for SSL_get1_peer_certificate); civetweb stores the missing pointer
 * as NULL and calls it on the first TLS connection. Built twice: with
 * SHIM_SSL as soname libssl.so (depending on libssl.so.3, plus the missing
 * function), and empty as soname libcrypto.so (depending on
 * libcrypto.so.3); dlsym() on either handle then finds every other function
 * in the real library. See exporters/civetweb_tls.h. */
#ifdef SHIM_SSL
typedef struct ssl_st SSL;
typedef struct x509_st X509;
X509* SSL_get1_peer_certificate(const SSL* ssl);

/* Same contract: OpenSSL 1.1's SSL_get_peer_certificate also returned a
 * reference the caller frees, which is what civetweb does. */
__attribute__((visibility("default"))) X509* SSL_get_peer_certificate(
    const SSL* ssl) {
  return SSL_get1_peer_certificate(ssl);
}
#else
/* No symbols: the library only stands for libcrypto.so.3. */
__attribute__((visibility("default"))) int pathwise_tls_shim_crypto;
#endif
