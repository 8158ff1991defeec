-- runtime_calls.sql — what each host runtime call means for the analysis.
--
-- Answers: is this CUDA/HIP runtime or driver call a launch (it queues device work), a
-- synchronization (the host blocks until the device catches up), or an allocation?
-- Binds: nothing. Creates: runtime_call_roles (a call not listed has role 'other') and launch_roles.
CREATE OR REPLACE TEMP TABLE runtime_call_roles (
    name VARCHAR,  -- exact runtime/driver API name as Kineto records it
    role VARCHAR   -- kernel_launch | graph_launch | memcpy_async | memset_async | sync | malloc | free
);
INSERT INTO runtime_call_roles VALUES
    ('cudaLaunchKernel', 'kernel_launch'), ('cudaLaunchKernelExC', 'kernel_launch'),
    ('cudaLaunchCooperativeKernel', 'kernel_launch'), ('cudaLaunchCooperativeKernelMultiDevice', 'kernel_launch'),
    ('cuLaunchKernel', 'kernel_launch'), ('cuLaunchKernelEx', 'kernel_launch'), ('cuLaunchCooperativeKernel', 'kernel_launch'),
    ('hipLaunchKernel', 'kernel_launch'), ('hipExtLaunchKernel', 'kernel_launch'), ('hipModuleLaunchKernel', 'kernel_launch'),
    ('hipExtModuleLaunchKernel', 'kernel_launch'), ('hipLaunchCooperativeKernel', 'kernel_launch'), ('hipHccModuleLaunchKernel', 'kernel_launch'),
    ('cudaGraphLaunch', 'graph_launch'), ('cuGraphLaunch', 'graph_launch'), ('hipGraphLaunch', 'graph_launch'),
    ('cudaMemcpyAsync', 'memcpy_async'), ('cudaMemcpy2DAsync', 'memcpy_async'), ('cudaMemcpyPeerAsync', 'memcpy_async'),
    ('cuMemcpyAsync', 'memcpy_async'), ('cuMemcpyHtoDAsync_v2', 'memcpy_async'), ('cuMemcpyDtoHAsync_v2', 'memcpy_async'),
    ('hipMemcpyAsync', 'memcpy_async'), ('hipMemcpy2DAsync', 'memcpy_async'), ('hipMemcpyPeerAsync', 'memcpy_async'),
    ('cudaMemsetAsync', 'memset_async'), ('cuMemsetD8Async', 'memset_async'), ('cuMemsetD32Async', 'memset_async'),
    ('hipMemsetAsync', 'memset_async'), ('hipMemsetD32Async', 'memset_async'),
    ('cudaDeviceSynchronize', 'sync'), ('cudaStreamSynchronize', 'sync'), ('cudaEventSynchronize', 'sync'),
    ('cudaMemcpy', 'sync'), ('cudaMemcpy2D', 'sync'), ('cudaMemcpyPeer', 'sync'), ('cudaMemset', 'sync'),
    ('cuCtxSynchronize', 'sync'), ('cuStreamSynchronize', 'sync'), ('cuEventSynchronize', 'sync'),
    ('cuMemcpyDtoH_v2', 'sync'), ('cuMemcpyHtoD_v2', 'sync'),
    ('hipDeviceSynchronize', 'sync'), ('hipStreamSynchronize', 'sync'), ('hipEventSynchronize', 'sync'),
    ('hipMemcpy', 'sync'), ('hipMemcpyWithStream', 'sync'), ('hipMemset', 'sync'),
    ('cudaMalloc', 'malloc'), ('cudaMallocAsync', 'malloc'), ('cuMemAlloc_v2', 'malloc'), ('hipMalloc', 'malloc'), ('hipExtMallocWithFlags', 'malloc'),
    ('cudaFree', 'free'), ('cudaFreeAsync', 'free'), ('cuMemFree_v2', 'free'), ('hipFree', 'free');

-- launch_roles: the roles that count as a launch (the call queues device work): launches per step,
-- per phase and per step row all count these.
CREATE OR REPLACE TEMP TABLE launch_roles (
    role VARCHAR  -- a role of runtime_call_roles
);
INSERT INTO launch_roles VALUES ('kernel_launch'), ('graph_launch'), ('memcpy_async'), ('memset_async');
