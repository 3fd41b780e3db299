#ifndef FAULTLINE_COPENSSL_SHIM_H
#define FAULTLINE_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>

/* Function-like macros do not import into Swift: wrap them here. */
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline size_t COpenSSL_BIO_pending(BIO *bio) { return BIO_pending(bio); }
static inline long COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
static const unsigned long COpenSSL_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const int COpenSSL_TLS1_2_VERSION = TLS1_2_VERSION;

/* TLS over memory BIOs (Transport/TLS*.swift) and certificate making (faultline cert). */
static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline uint64_t COpenSSL_SSL_CTX_set_options(SSL_CTX *ctx, uint64_t options) { return SSL_CTX_set_options(ctx, options); }
static const uint64_t COpenSSL_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const long COpenSSL_SSL_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
static inline EVP_PKEY *COpenSSL_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }
static inline void COpenSSL_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }
static inline int COpenSSL_SSL_CTX_set_keylog_data(SSL_CTX *ctx, void *data) { return SSL_CTX_set_ex_data(ctx, 0, data); }
static inline void *COpenSSL_SSL_CTX_get_keylog_data(const SSL *ssl) { return SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), 0); }

/* Certificates minted per host name (Transport/TLSLeafMinter.swift): the SNI callback. */
typedef int (*COpenSSL_servername_callback)(SSL *ssl, int *alert, void *arg);
static inline long COpenSSL_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, COpenSSL_servername_callback cb) { return SSL_CTX_set_tlsext_servername_callback(ctx, cb); }
static inline long COpenSSL_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg) { return SSL_CTX_set_tlsext_servername_arg(ctx, arg); }
static const int COpenSSL_SSL_TLSEXT_ERR_OK = SSL_TLSEXT_ERR_OK;
#endif
