// XLMR_HOST_DEVICE marks the inline functions of kernels/common that both backends run: plain
// host functions for the CPU backend's compiler, __host__ __device__ when nvcc compiles them
// into CUDA kernels, so that each piece of arithmetic has one definition.
#ifndef XLMR_KERNELS_COMMON_HOST_DEVICE_H_
#define XLMR_KERNELS_COMMON_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define XLMR_HOST_DEVICE __host__ __device__
#else
#define XLMR_HOST_DEVICE
#endif

#endif  // XLMR_KERNELS_COMMON_HOST_DEVICE_H_
