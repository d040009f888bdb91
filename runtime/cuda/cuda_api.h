/* cuda_api.h: the CUDA driver, cuBLASLt and cuDNN as tables of function
 * pointers loaded with dlopen/dlsym on first use (internal to runtime/cuda/).
 *
 * Nothing links these libraries: <cuda.h>, <cublasLt.h> and <cudnn.h> are
 * included for types and constants only, and each table member takes the
 * exact type of the declared function (__typeof__), so a signature mismatch
 * is a compile error rather than a crash on the GPU machine. Each table is
 * filled once per process (pthread_once) and never changes afterwards, so
 * any thread may read it without locks.
 *
 * Every call goes through RT_CU / RT_LT / RT_DNN: they evaluate to a
 * symc_status and, on failure, fill the error with the call text, the
 * library's error name and string, and the file and line. */
#ifndef SYMC_RUNTIME_CUDA_API_H
#define SYMC_RUNTIME_CUDA_API_H

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn.h>

#include "symc/status.h"

/* member, exported symbol, declared function (for its type) */
#define RT_CU_FUNCS(X)                                                                          \
    X(Init, "cuInit", cuInit)                                                                   \
    X(DriverGetVersion, "cuDriverGetVersion", cuDriverGetVersion)                               \
    X(DeviceGetCount, "cuDeviceGetCount", cuDeviceGetCount)                                     \
    X(DeviceGet, "cuDeviceGet", cuDeviceGet)                                                    \
    X(DeviceGetName, "cuDeviceGetName", cuDeviceGetName)                                        \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", cuDeviceGetAttribute)                         \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain)             \
    X(CtxSetCurrent, "cuCtxSetCurrent", cuCtxSetCurrent)                                        \
    X(CtxSynchronize, "cuCtxSynchronize", cuCtxSynchronize)                                     \
    X(GetErrorName, "cuGetErrorName", cuGetErrorName)                                           \
    X(GetErrorString, "cuGetErrorString", cuGetErrorString)                                     \
    X(MemAlloc, "cuMemAlloc_v2", cuMemAlloc)                                                    \
    X(MemFree, "cuMemFree_v2", cuMemFree)                                                       \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", cuMemcpyHtoD)                                              \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", cuMemcpyDtoH)                                              \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", cuMemcpyHtoDAsync)                               \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", cuMemcpyDtoDAsync)                               \
    X(MemsetD8, "cuMemsetD8_v2", cuMemsetD8)                                                    \
    X(MemsetD8Async, "cuMemsetD8Async", cuMemsetD8Async)                                        \
    X(MemGetAddressRange, "cuMemGetAddressRange_v2", cuMemGetAddressRange)                      \
    X(MemGetInfo, "cuMemGetInfo_v2", cuMemGetInfo)                                              \
    X(PointerGetAttribute, "cuPointerGetAttribute", cuPointerGetAttribute)                      \
    X(ModuleLoadData, "cuModuleLoadData", cuModuleLoadData)                                     \
    X(ModuleLoadDataEx, "cuModuleLoadDataEx", cuModuleLoadDataEx)                               \
    X(ModuleUnload, "cuModuleUnload", cuModuleUnload)                                           \
    X(ModuleGetFunction, "cuModuleGetFunction", cuModuleGetFunction)                            \
    X(FuncSetAttribute, "cuFuncSetAttribute", cuFuncSetAttribute)                               \
    X(LaunchKernel, "cuLaunchKernel", cuLaunchKernel)                                           \
    X(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", cuTensorMapEncodeTiled)                   \
    X(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", \
      cuOccupancyMaxActiveBlocksPerMultiprocessor)                                              \
    X(StreamCreate, "cuStreamCreate", cuStreamCreate)                                           \
    X(StreamDestroy, "cuStreamDestroy_v2", cuStreamDestroy)                                     \
    X(StreamSynchronize, "cuStreamSynchronize", cuStreamSynchronize)                            \
    X(EventCreate, "cuEventCreate", cuEventCreate)                                              \
    X(EventDestroy, "cuEventDestroy_v2", cuEventDestroy)                                        \
    X(EventRecord, "cuEventRecord", cuEventRecord)                                              \
    X(EventSynchronize, "cuEventSynchronize", cuEventSynchronize)                               \
    X(EventElapsedTime, "cuEventElapsedTime_v2", cuEventElapsedTime)                            \
    X(EventQuery, "cuEventQuery", cuEventQuery)                                                 \
    X(MemAllocHost, "cuMemAllocHost_v2", cuMemAllocHost)                                        \
    X(MemFreeHost, "cuMemFreeHost", cuMemFreeHost)                                              \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", cuMemcpyDtoHAsync)                               \
    X(MemsetD32Async, "cuMemsetD32Async", cuMemsetD32Async)                                     \
    X(ModuleGetGlobal, "cuModuleGetGlobal_v2", cuModuleGetGlobal)                               \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2", cuStreamBeginCapture)                      \
    X(StreamEndCapture, "cuStreamEndCapture", cuStreamEndCapture)                               \
    X(GraphInstantiate, "cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags)             \
    X(GraphLaunch, "cuGraphLaunch", cuGraphLaunch)                                              \
    X(GraphExecDestroy, "cuGraphExecDestroy", cuGraphExecDestroy)                               \
    X(GraphDestroy, "cuGraphDestroy", cuGraphDestroy)

#define RT_LT_FUNCS(X)                                                                                            \
    X(Create, "cublasLtCreate", cublasLtCreate)                                                                   \
    X(Destroy, "cublasLtDestroy", cublasLtDestroy)                                                                \
    X(GetVersion, "cublasLtGetVersion", cublasLtGetVersion)                                                       \
    X(GetStatusName, "cublasLtGetStatusName", cublasLtGetStatusName)                                              \
    X(GetStatusString, "cublasLtGetStatusString", cublasLtGetStatusString)                                        \
    X(MatmulDescCreate, "cublasLtMatmulDescCreate", cublasLtMatmulDescCreate)                                     \
    X(MatmulDescDestroy, "cublasLtMatmulDescDestroy", cublasLtMatmulDescDestroy)                                  \
    X(MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute", cublasLtMatmulDescSetAttribute)                   \
    X(MatrixLayoutCreate, "cublasLtMatrixLayoutCreate", cublasLtMatrixLayoutCreate)                               \
    X(MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", cublasLtMatrixLayoutDestroy)                            \
    X(MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute", cublasLtMatrixLayoutSetAttribute)             \
    X(MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate", cublasLtMatmulPreferenceCreate)                   \
    X(MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy", cublasLtMatmulPreferenceDestroy)                \
    X(MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute", cublasLtMatmulPreferenceSetAttribute) \
    X(MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic", cublasLtMatmulAlgoGetHeuristic)                   \
    X(MatmulAlgoCheck, "cublasLtMatmulAlgoCheck", cublasLtMatmulAlgoCheck)                                        \
    X(MatmulAlgoCapGetAttribute, "cublasLtMatmulAlgoCapGetAttribute", cublasLtMatmulAlgoCapGetAttribute)          \
    X(MatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute", cublasLtMatmulAlgoConfigGetAttribute) \
    X(Matmul, "cublasLtMatmul", cublasLtMatmul)

#define RT_DNN_FUNCS(X)                                                                                     \
    X(Create, "cudnnCreate", cudnnCreate)                                                                   \
    X(Destroy, "cudnnDestroy", cudnnDestroy)                                                                \
    X(SetStream, "cudnnSetStream", cudnnSetStream)                                                          \
    X(GetErrorString, "cudnnGetErrorString", cudnnGetErrorString)                                           \
    X(GetVersion, "cudnnGetVersion", cudnnGetVersion)                                                       \
    X(CreateTensorDescriptor, "cudnnCreateTensorDescriptor", cudnnCreateTensorDescriptor)                   \
    X(SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor", cudnnSetTensor4dDescriptor)                      \
    X(DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor", cudnnDestroyTensorDescriptor)                \
    X(CreateFilterDescriptor, "cudnnCreateFilterDescriptor", cudnnCreateFilterDescriptor)                   \
    X(SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor", cudnnSetFilter4dDescriptor)                      \
    X(DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor", cudnnDestroyFilterDescriptor)                \
    X(CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor", cudnnCreateConvolutionDescriptor)    \
    X(SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor", cudnnSetConvolution2dDescriptor)       \
    X(DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor", cudnnDestroyConvolutionDescriptor) \
    X(SetConvolutionMathType, "cudnnSetConvolutionMathType", cudnnSetConvolutionMathType)                   \
    X(SetConvolutionGroupCount, "cudnnSetConvolutionGroupCount", cudnnSetConvolutionGroupCount)             \
    X(GetConvolution2dForwardOutputDim, "cudnnGetConvolution2dForwardOutputDim",                            \
      cudnnGetConvolution2dForwardOutputDim)                                                                \
    X(GetConvolutionForwardAlgorithm_v7, "cudnnGetConvolutionForwardAlgorithm_v7",                          \
      cudnnGetConvolutionForwardAlgorithm_v7)                                                               \
    X(FindConvolutionForwardAlgorithmEx, "cudnnFindConvolutionForwardAlgorithmEx",                          \
      cudnnFindConvolutionForwardAlgorithmEx)                                                               \
    X(GetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize",                        \
      cudnnGetConvolutionForwardWorkspaceSize)                                                              \
    X(ConvolutionForward, "cudnnConvolutionForward", cudnnConvolutionForward)                               \
    X(ConvolutionBiasActivationForward, "cudnnConvolutionBiasActivationForward",                            \
      cudnnConvolutionBiasActivationForward)                                                                \
    X(CreateActivationDescriptor, "cudnnCreateActivationDescriptor", cudnnCreateActivationDescriptor)       \
    X(SetActivationDescriptor, "cudnnSetActivationDescriptor", cudnnSetActivationDescriptor)                \
    X(DestroyActivationDescriptor, "cudnnDestroyActivationDescriptor", cudnnDestroyActivationDescriptor)    \
    X(AddTensor, "cudnnAddTensor", cudnnAddTensor)                                                          \
    X(ActivationForward, "cudnnActivationForward", cudnnActivationForward)

#define RT_API_MEMBER(member, symbol, decl) __typeof__(decl) *member;
typedef struct rt_cu_table {
    RT_CU_FUNCS(RT_API_MEMBER)
} rt_cu_table;
typedef struct rt_lt_table {
    RT_LT_FUNCS(RT_API_MEMBER)
} rt_lt_table;
typedef struct rt_dnn_table {
    RT_DNN_FUNCS(RT_API_MEMBER)
} rt_dnn_table;
#undef RT_API_MEMBER

/* The process-wide tables; valid only after the matching rt_*_load
 * returned SYMC_OK (immutable from then on). */
extern rt_cu_table rt_cuda_cu;
extern rt_lt_table rt_cuda_lt;
extern rt_dnn_table rt_cuda_dnn;

/* A visible GPU, by its ordinal among the visible ones (CUDA_VISIBLE_DEVICES
 * decides which): a context runs on one, chosen at creation; the tools, the
 * tuner and rt_cuda_device_sm use device 0. */
#define RT_CU_MAX_DEVICES 64
typedef struct rt_cu_device {
    int ordinal;
    CUdevice dev;
    CUcontext ctx; /* its primary context, retained for the process */
    char name[256];
    uint32_t sm;
    int sms; /* its multiprocessors */
    int driver_version;
} rt_cu_device;

/* Loads and initializes the driver once, opens GPU `device` on its first
 * use, then makes its primary context current on the calling thread (every
 * rt_cuda entry point enters its context's device first, since callers may
 * be on any thread). A device outside 0..count-1 is refused, naming the
 * count. rt_cuda_cu_use makes an opened device's context current. */
symc_status rt_cuda_cu_enter(int device, const rt_cu_device **dev, symc_error *err);
symc_status rt_cuda_cu_use(const rt_cu_device *d, symc_error *err);
/* How many GPUs this process sees (after loading the driver). */
symc_status rt_cuda_device_count(int *count, symc_error *err);
/* Load cuBLASLt / cuDNN once (they need rt_cuda_cu_enter first). */
symc_status rt_cuda_lt_load(symc_error *err);
symc_status rt_cuda_dnn_load(symc_error *err);
/* "13.1.0" / "9.14.0" from the loaded libraries. */
void rt_cuda_lt_version(char *buf, size_t cap);
void rt_cuda_dnn_version(char *buf, size_t cap);

symc_status rt_cuda_cu_fail(CUresult r, const char *call, const char *file, int line, symc_error *err);
symc_status rt_cuda_lt_fail(cublasStatus_t r, const char *call, const char *file, int line, symc_error *err);
symc_status rt_cuda_dnn_fail(cudnnStatus_t r, const char *call, const char *file, int line, symc_error *err);

static inline symc_status rt_cu_ck(CUresult r, const char *call, const char *file, int line, symc_error *err) {
    return r == CUDA_SUCCESS ? SYMC_OK : rt_cuda_cu_fail(r, call, file, line, err);
}
static inline symc_status rt_lt_ck(cublasStatus_t r, const char *call, const char *file, int line, symc_error *err) {
    return r == CUBLAS_STATUS_SUCCESS ? SYMC_OK : rt_cuda_lt_fail(r, call, file, line, err);
}
static inline symc_status rt_dnn_ck(cudnnStatus_t r, const char *call, const char *file, int line, symc_error *err) {
    return r == CUDNN_STATUS_SUCCESS ? SYMC_OK : rt_cuda_dnn_fail(r, call, file, line, err);
}

/* Each evaluates to SYMC_OK or the failure status (err filled). */
#define RT_CU(err, fn, args) rt_cu_ck(rt_cuda_cu.fn args, "cu" #fn #args, __FILE__, __LINE__, err)
#define RT_LT(err, fn, args) rt_lt_ck(rt_cuda_lt.fn args, "cublasLt" #fn #args, __FILE__, __LINE__, err)
#define RT_DNN(err, fn, args) rt_dnn_ck(rt_cuda_dnn.fn args, "cudnn" #fn #args, __FILE__, __LINE__, err)

#endif
