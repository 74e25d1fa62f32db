#include "bench/blis_gemm.h"

#include <blis.h>  // /usr/include/<multiarch>/blis.h (libblis-dev): types only, never linked
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace xlmr::bench {
namespace {

struct Blis {
  void* handle = nullptr;
  decltype(&bli_sgemm) sgemm = nullptr;
  decltype(&bli_thread_set_num_threads) set_threads = nullptr;
  decltype(&bli_thread_get_num_threads) get_threads = nullptr;
  decltype(&bli_arch_query_id) arch_query_id = nullptr;
  decltype(&bli_arch_string) arch_string = nullptr;
  decltype(&bli_info_get_version_str) version = nullptr;
};

Blis& Library() {
  static Blis blis;
  return blis;
}

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* fn, std::string* error) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*fn == nullptr) *error = std::string("libblis has no ") + name;
  return *fn != nullptr;
}

}  // namespace

bool LoadBlis(std::string* error) {
  Blis& blis = Library();
  if (blis.handle != nullptr) return true;
  blis.handle = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (blis.handle == nullptr) {
    *error = std::string("cannot load libblis.so.4 (run tools/bootstrap.sh): ") + dlerror();
    return false;
  }
  return Resolve(blis.handle, "bli_sgemm", &blis.sgemm, error) &&
         Resolve(blis.handle, "bli_thread_set_num_threads", &blis.set_threads, error) &&
         Resolve(blis.handle, "bli_thread_get_num_threads", &blis.get_threads, error) &&
         Resolve(blis.handle, "bli_arch_query_id", &blis.arch_query_id, error) &&
         Resolve(blis.handle, "bli_arch_string", &blis.arch_string, error) &&
         Resolve(blis.handle, "bli_info_get_version_str", &blis.version, error);
}

std::string BlisDescription() {
  const Blis& blis = Library();
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(blis.sgemm), &info);
  return std::string("BLIS ") + blis.version() + ", arch " +
         blis.arch_string(blis.arch_query_id()) + ", " +
         std::to_string(blis.get_threads()) + " thread(s), bli_sgemm from " +
         (info.dli_fname != nullptr ? info.dli_fname : "?");
}

void BlisSetThreads(int threads) { Library().set_threads(threads); }

void BlisSgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  // Row-major storage: row stride = leading dimension, column stride 1; op() is BLIS's trans.
  Library().sgemm(trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                  trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, m, n, k, &alpha,
                  const_cast<float*>(a), lda, 1, const_cast<float*>(b), ldb, 1, &beta, c, ldc, 1);
}

}  // namespace xlmr::bench
