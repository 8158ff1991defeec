-- advice.sql — the catalogue of advice, each rule fired only by evidence in this profile.
-- requires: intervals.sql, ingest.sql, blame.sql, roofline_costs.sql, roofline.sql
-- inputs: roofline_device_input (the trace's deviceProperties; store/ingest/analyse.py registers it)
--
-- Answers: what in this trace triggers a specific piece of advice, with its figures, and how much of the
-- step the advice would give back (at most the time the triggering work held the step, from the blame;
-- each rule says in saving_basis how it estimates it: a rate from this profile, the device's peaks, or the
-- blamed time itself).
-- Binds: nothing. Reads the tables sql/ingest.sql and sql/blame.sql build (placed_ops, placed_activity,
-- placed_runtime, memory_events, measurement_window, profile_kind, blame_rows, blame_pieces, blame_copy_calls, blame_windows,
-- host_annotations) and sql/roofline.sql (roofline_costs, roofline_device_peak).
-- Creates advice_findings: one row per rule that fired; store/document/verdict.py picks the finding of the
-- verdict's own bound for next_step (sql/metrics.sql hands them over as the `advice` column), and
-- accelerator_declared (whether the trace shows an accelerator at work but recorded no device work of it).
-- Every rule is tested on a synthetic trace (tests/test_advice.py).

-- advice_rules: the catalogue (what each rule looks for is its CTE below).
CREATE OR REPLACE TEMP TABLE advice_rules (
    rule   VARCHAR,  -- the rule's name
    bounds VARCHAR,  -- the verdicts (store/document/verdict.py) whose next_step it can be, comma-separated
    advice VARCHAR   -- what to do
);
INSERT INTO advice_rules VALUES
    ('batchnorm_not_folded', 'cpu-compute,cpu-overhead,gpu-memory,gpu-compute,host-launch',
     'fold BatchNorm into the preceding convolutions for inference (LibreYOLO model.fuse(), torch.ao fuse_modules, or an export that folds it): the normalisation then costs nothing'),
    ('slow_convolution', 'cpu-compute,cpu-overhead',
     'these convolutions miss oneDNN (mkldnn_convolution) although PyTorch would pick it for their shapes: keep inputs float32 (float64 and integer inputs stay native), check torch.backends.mkldnn.enabled, and look for a transposed or 3-d layer'),
    ('fp32_convolutions_on_tensor_cores', 'gpu-compute',
     'run under AMP (torch.autocast bf16/fp16, --amp) with channels_last so GEMMs and convolutions use the Tensor Cores, or allow TF32 (torch.backends.cudnn.allow_tf32 / matmul.allow_tf32)'),
    ('blocking_copies', 'sync,transfer',
     'pin the host memory: DataLoader(pin_memory=True) and .to(device, non_blocking=True) for host-to-device copies, a pinned host buffer (torch.empty(..., pin_memory=True)) with non_blocking=True for device-to-host ones, read only after an event says the copy is done'),
    ('single_process_dataloader', 'dataloader',
     'raise num_workers (--workers) with persistent_workers=True and pin_memory=True: the batches are loaded in the training process'),
    ('per_step_sync', 'sync',
     'remove .item()/.cpu()/.tolist() of device tensors from the step (log every N steps, or accumulate on the device and read once)'),
    ('tiny_launch_bound_kernels', 'host-launch',
     'launch fewer, larger kernels: capture the step in a CUDA graph (torch.compile mode="reduce-overhead"), fuse with torch.compile, or raise --batch'),
    ('exposed_ddp_communication', 'communication',
     'overlap the all-reduce with backward: a larger DDP bucket_cap_mb (fewer, fuller buckets), gradient_as_bucket_view=True, and no sync between backward and the optimizer step'),
    -- the host-side verdicts of a GPU run whose device work was not recorded: "use a GPU" would be wrong there
    ('no_device_events', 'cpu-compute,cpu-overhead',
     'profile again with the device activity recorded (torch.profiler activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], or the accelerator''s own activity; CUPTI tracing, not counter/range profiling): this verdict reads only the host, and its ops ran on the device');

-- advice_accelerator_ops: host ops that run only when an accelerator does the work (their kernels' launches
-- unrecorded with the device activity): cuDNN/MIOpen entry points, CUDA-only attention, c10d's NCCL ranges.
CREATE OR REPLACE TEMP TABLE advice_accelerator_ops (
    pattern VARCHAR,  -- RE2 regular expression over the op name, case-insensitive
    source  VARCHAR   -- where the names come from
);
INSERT INTO advice_accelerator_ops VALUES
    ('^aten::_?(cudnn|miopen)_', 'PyTorch native_functions.yaml: aten::cudnn_convolution, cudnn_batch_norm, miopen_convolution, _cudnn_rnn …'),
    ('^aten::_(efficient_attention|flash_attention)_(forward|backward)$', 'PyTorch SDPA CUDA/ROCm backends (the CPU one is _scaled_dot_product_flash_attention_for_cpu)'),
    ('^(nccl|rccl):', 'c10d ProcessGroupNCCL record_function ranges (nccl:all_reduce …)');

-- accelerator_declared: whether the trace shows an accelerator at work although it holds no device work at all
-- (no kernel, copy or memset: the device activity was off, or CUPTI ran in counter mode). The evidence of work:
-- device runtime/driver calls (cuda/hip/xpu/mtia…_runtime events, sql/events.sql), allocator events on a
-- device, or ops only an accelerator runs. deviceProperties alone are not: Kineto writes them on every CUDA
-- build, so a CPU-only run on a GPU machine has them too (they are quoted, not counted). Such a trace is no CPU
-- profile: its host-side verdict carries the caveat (store/document/assemble.py marks it no_device_events).
CREATE OR REPLACE TEMP TABLE accelerator_declared AS
WITH devices AS (SELECT count(*) AS n, string_agg(DISTINCT name, ', ' ORDER BY name) AS names FROM roofline_device_input),
-- the calls and ops quoted: the four most frequent names
calls AS (
    SELECT coalesce(sum(k), 0) AS n, string_agg(name, ', ' ORDER BY k DESC, name) FILTER (WHERE rank <= 4)
           || CASE WHEN count(*) > 4 THEN ', …' ELSE '' END AS names
    FROM (SELECT name, count(*) AS k, row_number() OVER (ORDER BY count(*) DESC, name) AS rank
          FROM placed_runtime GROUP BY name)
),
allocations AS (SELECT count(*) AS n FROM memory_events WHERE mem_device_type > 0),
ops AS (
    SELECT coalesce(sum(k), 0) AS n, string_agg(name, ', ' ORDER BY k DESC, name) FILTER (WHERE rank <= 4)
           || CASE WHEN count(*) > 4 THEN ', …' ELSE '' END AS names
    FROM (SELECT o.name, count(*) AS k, row_number() OVER (ORDER BY count(*) DESC, o.name) AS rank FROM placed_ops o
          WHERE EXISTS (SELECT 1 FROM advice_accelerator_ops a WHERE regexp_matches(o.name, '(?i)' || a.pattern))
          GROUP BY o.name)
)
SELECT d.n AS devices, d.names AS device_names, c.n AS device_runtime_calls, c.names AS runtime_call_names,
       a.n AS device_allocations, o.n AS accelerator_ops, o.names AS accelerator_op_names,
       (c.n > 0 OR a.n > 0 OR o.n > 0) AND NOT EXISTS (SELECT 1 FROM placed_activity) AS without_device_events
FROM devices d, calls c, allocations a, ops o;

-- per_unit(text): the text with "per step" said "per call" in an inference profile (its step is one call)
CREATE OR REPLACE TEMP MACRO per_unit(txt) AS
    CASE WHEN (SELECT kind FROM profile_kind) = 'infer' THEN replace(txt, ' per step', ' per call') ELSE txt END;

CREATE OR REPLACE TEMP TABLE advice_findings AS
WITH w AS (SELECT steps, (SELECT avg(end_ns - start_ns) FROM blame_windows) AS step_ns FROM measurement_window),
infer AS (SELECT kind = 'infer' AS yes FROM profile_kind),
on_gpu AS (SELECT EXISTS (SELECT 1 FROM placed_activity) AS yes),
blamed AS (SELECT cause, sum(ns) / (SELECT steps FROM w) AS ns FROM blame_rows GROUP BY cause),
-- the blame's pieces of the causes whose time a rule's work held (interval_time_covered)
memory_bound_pieces AS (SELECT s, e FROM blame_pieces WHERE cause = 'memory_bound'),
gemm_conv_pieces AS (SELECT s, e FROM blame_pieces WHERE cause = 'gemm_conv'),
sync_bubble_pieces AS (SELECT s, e FROM blame_pieces WHERE cause = 'sync_bubble'),
ops AS (SELECT name, count(*) AS calls, sum(self_ns) AS self_ns FROM placed_ops WHERE step IS NOT NULL GROUP BY name),
op_self AS (SELECT sum(self_ns) AS ns FROM placed_ops WHERE step IS NOT NULL),
-- BatchNorm at inference: its ops still run, so it was not folded into the convolutions. The saving: on a CPU
-- the normalising ops' own time (folding removes them; the convolutions cost the same); on a GPU the time its
-- kernels held the device with no GEMM/conv beside them (the memory_bound blame pieces they cover)
bn_kernels AS (
    SELECT ts AS s, ts + dur AS e FROM placed_activity
    WHERE kind = 'kernel' AND category = 'norm' AND regexp_matches(name, '(?i)(batch_?norm|bn_fw|bn_bw|\bbn_)')
),
bn_held AS (
    SELECT covered / (SELECT steps FROM w) AS ns FROM interval_time_covered(memory_bound_pieces, bn_kernels)
),
batchnorm AS (
    SELECT 'batchnorm_not_folded' AS rule,
           format('{} aten BatchNorm ops per step ({}), {:.2f} ms per step of op self time ({:.1f}% of all op self time)',
                  round(sum(calls) / (SELECT steps FROM w))::BIGINT, string_agg(DISTINCT name, ', ' ORDER BY name),
                  sum(self_ns) / 1e6 / (SELECT steps FROM w), 100.0 * sum(self_ns) / (SELECT ns FROM op_self)) AS evidence,
           CASE WHEN (SELECT yes FROM on_gpu) THEN (SELECT ns FROM bn_held) / 1e6
                ELSE sum(self_ns) / 1e6 / (SELECT steps FROM w) END AS saving_ms,
           CASE WHEN (SELECT yes FROM on_gpu)
                THEN 'the time its BatchNorm kernels held the device with no GEMM/conv beside them, which folding removes'
                ELSE 'the BatchNorm ops'' own CPU time, which folding removes' END AS saving_basis
    -- the ops that normalise (aten::batch_norm and aten::_batch_norm_impl_index only wrap them: not counted twice)
    FROM ops WHERE name IN ('aten::native_batch_norm', 'aten::_native_batch_norm_legit_no_training', 'aten::cudnn_batch_norm',
                            'aten::miopen_batch_norm')
      AND (SELECT yes FROM infer)
    HAVING count(*) > 0
),
-- convolutions on PyTorch's native (im2col + GEMM) path. PyTorch sends some there itself, as faster
-- (use_mkldnn in aten/src/ATen/native/ConvUtils.h): a 2-d float32 convolution of a batch-1 input of at most
-- 20,480 elements whose kernel is not over 3 in both dims, and an unstrided 1×1 one under batch 16 when
-- single-threaded (the thread count is not in a trace: such calls are taken as its choice). Those get no
-- advice; the rule fires for the others. A wrapper and the op it calls (thnn_conv2d → _slow_conv2d_forward)
-- are one convolution: a family's convolutions are the calls of its most-called name. A call without recorded
-- shapes cannot be judged and gets no advice.
slow_names(name, family) AS (VALUES
    ('aten::thnn_conv2d', '2d'), ('aten::thnn_conv2d_forward', '2d'), ('aten::_slow_conv2d_forward', '2d'),
    ('aten::slow_conv2d_forward', '2d'), ('aten::slow_conv_dilated2d', 'dilated'), ('aten::slow_conv3d', '3d'),
    ('aten::slow_conv3d_forward', '3d'), ('aten::_slow_conv2d_backward', '2d backward')
),
slow_calls AS (
    SELECT o.event_id, o.name, n.family, o.self_ns,
           TRY_CAST(from_json(o.shape_dims, '["JSON"]')[1] AS BIGINT[]) AS x,  -- input dims (N, C, H, W)
           TRY_CAST(from_json(o.shape_dims, '["JSON"]')[2] AS BIGINT[]) AS w,  -- weight dims (O, C, kh, kw)
           rl_ints(TRY_CAST(o.concrete_inputs AS VARCHAR[])[5]) AS stride    -- (input, weight, kernel, bias, stride, …)
    FROM placed_ops o JOIN slow_names n USING (name)
    WHERE o.step IS NOT NULL AND json_valid(o.shape_dims)
),
judged_slow AS (
    SELECT *, coalesce(family = '2d' AND len(x) = 4 AND len(w) = 4 AND (
                  (x[1] = 1 AND NOT (w[3] > 3 AND w[4] > 3) AND list_product(x) <= 20480)
                  OR (w[3] = 1 AND w[4] = 1 AND x[1] < 16 AND list_max(stride) = 1)), false) AS pytorch_choice
    FROM slow_calls
),
slow_counts AS (
    -- per family: its convolutions, those PyTorch chose the path for, and the ones that missed oneDNN
    SELECT family, max(calls) AS calls, max(chosen) AS chosen, max(calls - chosen) AS missed
    FROM (SELECT family, name, count(*) AS calls, count(*) FILTER (WHERE pytorch_choice) AS chosen
          FROM judged_slow GROUP BY ALL)
    GROUP BY family
),
missed_slow AS (SELECT * FROM judged_slow WHERE NOT pytorch_choice),
conv_paths AS (
    SELECT CASE WHEN op = 'aten::mkldnn_convolution' THEN 'onednn' ELSE 'slow' END AS path,
           count(*) AS calls, sum(dur) AS ns, sum(flops) AS flops, count(flops) AS priced
    FROM roofline_costs
    WHERE op = 'aten::mkldnn_convolution' OR event_id IN (SELECT event_id FROM missed_slow)
    GROUP BY ALL
),
slow_priced AS (
    SELECT s.ns AS slow_ns,
           CASE WHEN s.priced = s.calls AND o.priced = o.calls AND o.flops > 0 THEN s.flops * o.ns / o.flops END AS onednn_ns,
           CASE WHEN o.priced = o.calls AND o.flops > 0 THEN o.flops / o.ns END AS onednn_gflop_per_s
    FROM (SELECT * FROM conv_paths WHERE path = 'slow') s LEFT JOIN (SELECT * FROM conv_paths WHERE path = 'onednn') o ON true
),
slow_conv AS (
    SELECT 'slow_convolution' AS rule,
           format('{} convolutions per step on the native path that PyTorch''s own rule sends to oneDNN ({}, {:.2f} ms per step self time) beside {} of aten::mkldnn_convolution{}',
                  round((SELECT sum(missed) FROM slow_counts) / (SELECT steps FROM w))::BIGINT,
                  string_agg(DISTINCT name, ', ' ORDER BY name),
                  sum(self_ns) / 1e6 / (SELECT steps FROM w),
                  coalesce((SELECT round(calls / (SELECT steps FROM w))::BIGINT FROM ops WHERE name = 'aten::mkldnn_convolution'), 0),
                  CASE WHEN (SELECT sum(chosen) FROM slow_counts) > 0
                       THEN format('; {} more are small batch-1 inputs PyTorch keeps native on purpose',
                                   round((SELECT sum(chosen) FROM slow_counts) / (SELECT steps FROM w))::BIGINT)
                       ELSE '' END) AS evidence,
           CASE WHEN any_value(p.onednn_ns) IS NOT NULL THEN greatest(any_value(p.slow_ns) - any_value(p.onednn_ns), 0)
                ELSE coalesce(any_value(p.slow_ns), sum(self_ns)) END / 1e6 / (SELECT steps FROM w) AS saving_ms,
           CASE WHEN any_value(p.onednn_ns) IS NOT NULL
                THEN format('their {:.2f} ms per step less the {:.2f} ms their FLOPs take at the {:.2f} GFLOP/s this profile''s own oneDNN convolutions ran at',
                            any_value(p.slow_ns) / 1e6 / (SELECT steps FROM w), any_value(p.onednn_ns) / 1e6 / (SELECT steps FROM w),
                            any_value(p.onednn_gflop_per_s))
                ELSE 'at most their own time: no oneDNN convolution with recorded shapes to price them at' END AS saving_basis
    FROM missed_slow LEFT JOIN slow_priced p ON true
    HAVING count(*) > 0
),
-- GEMM/convolution kernels off the Tensor Cores on a device that has them (its other kernels say so). The
-- saving: the time they held the device (the gemm_conv blame pieces they cover) × (1 − the device's FP32 peak ÷
-- its Tensor Core peak, sql/device_peaks.sql: TF32, else BF16/FP16), if they stay compute-bound; without the
-- device's peaks, at most the time they held it
gemm_kernels AS (
    SELECT name, device, tensorcore, sum(dur) AS ns FROM placed_activity WHERE kind = 'kernel' AND category = 'gemm' GROUP BY ALL
),
off_tc_spans AS (
    SELECT ts AS s, ts + dur AS e FROM placed_activity WHERE kind = 'kernel' AND category = 'gemm' AND NOT tensorcore
),
off_tc_held AS (
    SELECT covered / (SELECT steps FROM w) AS ns FROM interval_time_covered(gemm_conv_pieces, off_tc_spans)
),
off_tc_peaks AS (
    SELECT max(tflops) FILTER (WHERE peak_class = 'fp32') AS fp32,
           coalesce(max(tflops) FILTER (WHERE peak_class = 'tf32'), max(tflops) FILTER (WHERE peak_class = 'bf16'),
                    max(tflops) FILTER (WHERE peak_class = 'fp16')) AS tensor,
           coalesce(CASE WHEN count(*) FILTER (WHERE peak_class = 'tf32') > 0 THEN 'TF32' END,
                    CASE WHEN count(*) FILTER (WHERE peak_class = 'bf16') > 0 THEN 'BF16' END, 'FP16') AS tensor_class,
           any_value(model) AS model
    FROM roofline_device_peak
    WHERE device = (SELECT CAST(arg_max(device, ns) AS VARCHAR) FROM gemm_kernels WHERE NOT tensorcore)
),
fp32_conv AS (
    SELECT 'fp32_convolutions_on_tensor_cores' AS rule,
           format('{:.2f} ms per step ({:.1f}% of GEMM/conv kernel time) in GEMM/conv kernels off the Tensor Cores, most in {}',
                  sum(ns) FILTER (WHERE NOT tensorcore) / 1e6 / (SELECT steps FROM w),
                  100.0 * sum(ns) FILTER (WHERE NOT tensorcore) / sum(ns),
                  arg_max(name, ns) FILTER (WHERE NOT tensorcore)) AS evidence,
           (SELECT ns FROM off_tc_held) / 1e6
               * coalesce(1 - (SELECT fp32 / tensor FROM off_tc_peaks WHERE fp32 < tensor), 1) AS saving_ms,
           coalesce((SELECT format('the {:.2f} ms per step they held the device × (1 − {} FP32 {} ÷ {} {} TFLOP/s dense peaks, sql/device_peaks.sql), if they stay compute-bound',
                                   (SELECT ns FROM off_tc_held) / 1e6, model, fp32, tensor_class, tensor)
                     FROM off_tc_peaks WHERE fp32 < tensor),
                    'at most the time they held the device: its FP32 and Tensor Core peaks are not in sql/device_peaks.sql') AS saving_basis
    FROM gemm_kernels
    WHERE EXISTS (SELECT 1 FROM placed_activity
                  WHERE kind = 'kernel' AND (tensorcore OR regexp_matches(name, '(?i)(volta|turing|ampere|hopper|sm_?[7-9][05]|sm_?100)')))
    HAVING 2 * sum(ns) FILTER (WHERE NOT tensorcore) >= sum(ns)
),
-- copies whose host call blocked the host (sql/blame.sql blame_copy_calls: pageable memory on either side, a
-- synchronous copy, or a call that returned only once its copy had finished), per direction and memory; the
-- saving: the time they held the step while the device idled (their share of the sync_bubble pieces)
blocking_copy_spans AS (SELECT call_start_ns AS s, call_end_ns AS e FROM blame_copy_calls WHERE blocks),
copy_held AS (
    SELECT covered / (SELECT steps FROM w) AS ns FROM interval_time_covered(sync_bubble_pieces, blocking_copy_spans)
),
copy_kinds AS (
    SELECT direction, memory, pinned, count(DISTINCT event_id) AS calls, sum(bytes) AS bytes
    FROM blame_copy_calls WHERE blocks GROUP BY ALL
),
blocking AS (
    SELECT 'blocking_copies' AS rule,
           format('{} blocking copies per step ({}); the host blocked {:.2f} ms per step in them with the device idle',
                  round(sum(calls) / (SELECT steps FROM w))::BIGINT,
                  string_agg(format('{}{}: {} per step, {} bytes per step, pinned: {}', direction,
                                    coalesce(' ' || memory, ''), round(calls / (SELECT steps FROM w))::BIGINT,
                                    coalesce(TRY_CAST(round(bytes / (SELECT steps FROM w)) AS BIGINT)::VARCHAR,
                                             round(bytes / (SELECT steps FROM w))::VARCHAR, 'unrecorded'),
                                    pinned), '; ' ORDER BY calls DESC, direction, memory),
                  (SELECT ns FROM copy_held) / 1e6) AS evidence,
           (SELECT ns FROM copy_held) / 1e6 AS saving_ms,
           'the time the host sat blocked in those copy calls with the device idle' AS saving_basis
    FROM copy_kinds
    HAVING count(*) > 0 AND (SELECT ns FROM copy_held) > 0
),
-- the DataLoader loading in the training process (num_workers=0) while the step waits
dataloader AS (
    SELECT 'single_process_dataloader' AS rule,
           format('the step waits {:.2f} ms per step ({:.1f}% of it) in {}',
                  (SELECT ns FROM blamed WHERE cause = 'dataload') / 1e6,
                  100.0 * (SELECT ns FROM blamed WHERE cause = 'dataload') / (SELECT step_ns FROM w),
                  any_value(name)) AS evidence,
           (SELECT ns FROM blamed WHERE cause = 'dataload') / 1e6 AS saving_ms,
           'the time the step waited for data with the device idle' AS saving_basis
    FROM host_annotations WHERE name LIKE 'enumerate(DataLoader)#_SingleProcessDataLoaderIter%'
    HAVING count(*) > 0 AND coalesce((SELECT ns FROM blamed WHERE cause = 'dataload'), 0) > 0
),
-- a scalar read of a device tensor every step: the host waits for the device in a synchronizing call
-- (the blocking copies' time is blocking_copies')
sync_held AS (
    SELECT coalesce((SELECT ns FROM blamed WHERE cause = 'sync_bubble'), 0) - (SELECT ns FROM copy_held) AS ns
),
scalar_reads AS (
    SELECT 'per_step_sync' AS rule,
           format('{} calls of {} per step while the host blocked {:.2f} ms per step in synchronizing calls with the device idle',
                  round(sum(calls) / (SELECT steps FROM w))::BIGINT, string_agg(DISTINCT name, ', ' ORDER BY name),
                  (SELECT ns FROM sync_held) / 1e6) AS evidence,
           (SELECT ns FROM sync_held) / 1e6 AS saving_ms,
           'the time the host sat blocked in synchronizing calls (copies excepted) with the device idle' AS saving_basis
    FROM ops WHERE name IN ('aten::item', 'aten::_local_scalar_dense', 'aten::tolist', 'aten::is_nonzero', 'aten::nonzero')
    HAVING count(*) > 0 AND (SELECT ns FROM sync_held) > 0
),
-- many short kernels, each launched while the device waited
tiny_kernels AS (
    SELECT 'tiny_launch_bound_kernels' AS rule,
           format('{} kernels per step of {:.1f} µs mean, while the device idled {:.2f} ms per step waiting for launches',
                  round(count(*) / (SELECT steps FROM w))::BIGINT, avg(dur) / 1e3,
                  (SELECT ns FROM blamed WHERE cause = 'launching') / 1e6) AS evidence,
           (SELECT ns FROM blamed WHERE cause = 'launching') / 1e6 AS saving_ms,
           'the time the device idled waiting for launches: what-if --remove-launches with every launch removed saves no more' AS saving_basis
    FROM placed_activity WHERE kind = 'kernel' AND step IS NOT NULL
    HAVING avg(dur) < 20000 AND coalesce((SELECT ns FROM blamed WHERE cause = 'launching'), 0) > 0
),
-- all-reduce kernels that no compute hid
ddp AS (
    SELECT 'exposed_ddp_communication' AS rule,
           format('{} all-reduce kernels per step ({:.2f} ms per step), {:.2f} ms per step of it with no compute beside it',
                  round(count(*) / (SELECT steps FROM w))::BIGINT, sum(dur) / 1e6 / (SELECT steps FROM w),
                  (SELECT ns FROM blamed WHERE cause = 'communication') / 1e6) AS evidence,
           (SELECT ns FROM blamed WHERE cause = 'communication') / 1e6 AS saving_ms,
           'the time the all-reduce ran with no compute beside it, which overlap with backward would hide' AS saving_basis
    FROM placed_activity WHERE kind = 'kernel' AND category = 'communication' AND regexp_matches(name, '(?i)all_?reduce')
    HAVING count(*) > 0 AND coalesce((SELECT ns FROM blamed WHERE cause = 'communication'), 0) > 0
),
-- an accelerator declared, no device work recorded: the saving is unknown (the device's time was not recorded)
no_device AS (
    SELECT 'no_device_events' AS rule,
           'the trace shows an accelerator at work — ' || concat_ws(', ',
               CASE WHEN device_runtime_calls > 0 THEN format('{} device runtime calls ({})', device_runtime_calls, runtime_call_names) END,
               CASE WHEN device_allocations > 0 THEN format('{} allocator events on a device', device_allocations) END,
               CASE WHEN accelerator_ops > 0 THEN format('{} ops only an accelerator runs ({})', accelerator_ops, accelerator_op_names) END)
           || coalesce(format(' on {} ({} in its deviceProperties)', device_names, devices), '')
           || ' — but holds no kernel, copy or memset' AS evidence,
           NULL::DOUBLE AS saving_ms,
           'not measurable: the trace holds none of the device''s time' AS saving_basis
    FROM accelerator_declared WHERE without_device_events
),
fired AS (
    SELECT * FROM batchnorm UNION ALL SELECT * FROM slow_conv UNION ALL SELECT * FROM fp32_conv
    UNION ALL SELECT * FROM blocking UNION ALL SELECT * FROM dataloader UNION ALL SELECT * FROM scalar_reads
    UNION ALL SELECT * FROM tiny_kernels UNION ALL SELECT * FROM ddp UNION ALL SELECT * FROM no_device
),
-- an inference profile's step is one call: its figures say so, as every reader of it does
worded AS (
    SELECT * REPLACE (per_unit(evidence) AS evidence, per_unit(saving_basis) AS saving_basis) FROM fired
)
SELECT
    -- the rule (advice_rules)
    f.rule,
    -- the verdicts it can be the next step of, comma-separated
    r.bounds,
    -- what in this profile triggered it, with its figures
    f.evidence,
    -- what to do
    r.advice,
    -- the projected saving, ms per step: at most the time the triggering work held the step (saving_basis says
    -- how each rule estimates it)
    f.saving_ms,
    -- how the saving is estimated, in words (quoted after the saving in the verdict's next_step)
    f.saving_basis,
    -- the same as a share of the blame's step, %
    100.0 * f.saving_ms * 1e6 / nullif((SELECT step_ns FROM w), 0) AS saving_pct
FROM worded f JOIN advice_rules r USING (rule);
