// Marks a function written once for the host and for CUDA kernels, so that a
// CPU layer and its CUDA twin share their arithmetic.
#pragma once

#if defined(__CUDACC__)
#define TROUPE_HOST_DEVICE __host__ __device__
#else
#define TROUPE_HOST_DEVICE
#endif
