// Finding and loading libtroupe_cuda.
#include "model/backend/cuda_module.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <mutex>

namespace troupe::detail {

namespace {

#ifdef TROUPE_CUDA_MODULE_FILE
constexpr const char* module_file = TROUPE_CUDA_MODULE_FILE; // its soname
#else
constexpr const char* module_file = nullptr;
#endif

// The folder of the library or program this code is linked into.
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_folder), &info) == 0 || !info.dli_fname)
    return {};
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string{} : path.substr(0, slash + 1);
}

// Opens the module beside this code when it is there (an install, the build
// tree), else wherever the dynamic linker finds it.
expected<void*> open_module() {
  const std::string beside = own_folder() + module_file;
  const bool there = access(beside.c_str(), F_OK) == 0;
  if (void* handle = dlopen(there ? beside.c_str() : module_file, RTLD_NOW | RTLD_LOCAL))
    return handle;
  const char* error = dlerror();
  return fail(errc::device, std::string("the CUDA backend (") + module_file
                                          + ") does not load: " + (error ? error : "not found"));
}

expected<const cuda_module*> load_once() {
  if (!module_file)
    return fail(errc::device,
                "CUDA support was not built into Troupe (configure with nvcc available and "
                "-DTROUPE_CUDA=ON)");
  auto handle = open_module();
  if (!handle)
    return handle.error();
  using entry_fn = const cuda_module* (*) ();
  auto entry = reinterpret_cast<entry_fn>(dlsym(*handle, cuda_module_entry));
  if (!entry)
    return fail(errc::device, std::string("the CUDA backend (") + module_file
                                            + ") has no " + cuda_module_entry
                                            + ": a module of another build?");
  return entry();
}

} // namespace

bool cuda_module_built() {
  return module_file != nullptr;
}

expected<const cuda_module*> load_cuda_module() {
  static std::once_flag once;
  static expected<const cuda_module*> loaded{nullptr};
  std::call_once(once, [] { loaded = load_once(); });
  return loaded;
}

} // namespace troupe::detail
