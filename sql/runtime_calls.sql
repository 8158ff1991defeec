-- runtime_calls.sql — what each host runtime call means for the analysis.
--
-- Answers: is this CUDA/HIP runtime or driver call a launch (it queues device work), a
-- synchronization (the host blocks until the device catches up), an allocation, a one-time set-up
-- (startup), code loading (module_load) or a cheap query of the device or stream (query)?
-- Binds: nothing. Creates: runtime_call_roles (exact names), runtime_call_role_patterns (families of
-- names), runtime_call_role(name) (the lookup: the exact name first, then the first family, else 'other')
-- and launch_roles.
-- Exact names win over families: hipModuleLaunchKernel and hipExtModuleLaunchKernel are ROCm's ordinary
-- launches (PyTorch's and Tensile's kernels go through them), not module loading, though "module" is in
-- their names; a device-properties query is a query whenever it is called (ROCm's
-- hipGetDevicePropertiesR0600 runs every step in MI300 traces), not start-up.
CREATE OR REPLACE TEMP TABLE runtime_call_roles (
    name VARCHAR,  -- exact runtime/driver API name as Kineto records it
    role VARCHAR   -- kernel_launch | graph_launch | memcpy_async | memset_async | sync | malloc | free
                   -- | startup | module_load | query
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

-- runtime_call_role_patterns: the families of calls no exact name lists, first match wins (case-insensitive RE2).
-- Names from the CUDA runtime/driver API and HIP references and the shared traces (cudaStreamCreateWithFlags,
-- cudaGetFuncBySymbol, hipGetDevicePropertiesR0600, hipStreamGetDevice, cudaOccupancy…WithFlags).
CREATE OR REPLACE TEMP TABLE runtime_call_role_patterns (
    rule_order INTEGER,  -- evaluation order, lowest first
    role       VARCHAR,  -- a role of runtime_call_roles
    pattern    VARCHAR,  -- RE2 regular expression over the call name, case-insensitive
    source     VARCHAR   -- what the family is
);
INSERT INTO runtime_call_role_patterns VALUES
    (10, 'query', '(getdeviceproperties|devicegetattribute|getdevicecount|getdevice$|streamgetdevice|drivergetversion'
                  || '|runtimegetversion|funcgetattributes|pointergetattributes|occupancy|streamgetpriority'
                  || '|devicegetstreampriorityrange|streamiscapturing|streamgetcaptureinfo|getlasterror|peekatlasterror'
                  || '|eventquery|streamquery|memgetinfo)',
        'queries of the device, a stream, a pointer or a function: host work, at set-up or in every step alike'),
    (20, 'startup', '(streamcreate|eventcreate|ctxcreate|ctxsetcurrent|deviceprimaryctx|create_?handle'
                    || '|(cublas|cublaslt|cudnn|cusparse|cufft|curand|nccl|miopen|rocblas|hipblas(lt)?)create'
                    || '|cudasetdevice|hipsetdevice|cuinit|hipinit|comminit)',
        'creating what the device needs once: streams, events, contexts, library handles, communicators'),
    (30, 'module_load', '(module(load|getfunction|getglobal|unload)|culibrary|librarygetkernel|getfunc|registerfatbinary'
                        || '|registerfunction)',
        'loading device code: cu/hipModuleLoad*, cuLibrary*, cudaGetFuncBySymbol (lazy loading)');

-- runtime_call_role(name): the role of one runtime/driver call.
CREATE OR REPLACE TEMP MACRO runtime_call_role(call_name) AS coalesce(
    (SELECT r.role FROM runtime_call_roles r WHERE r.name = call_name),
    (SELECT p.role FROM runtime_call_role_patterns p WHERE regexp_matches(call_name, '(?i)' || p.pattern)
     ORDER BY p.rule_order LIMIT 1),
    'other');

-- launch_roles: the roles that count as a launch (the call queues device work): launches per step,
-- per phase and per step row all count these.
CREATE OR REPLACE TEMP TABLE launch_roles (
    role VARCHAR  -- a role of runtime_call_roles
);
INSERT INTO launch_roles VALUES ('kernel_launch'), ('graph_launch'), ('memcpy_async'), ('memset_async');
