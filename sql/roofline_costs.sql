-- roofline_costs.sql — FLOPs and bytes of every modeled op call, from its recorded shapes.
-- requires: ingest.sql, roofline_models.sql
--
-- Answers nothing by itself: it builds roofline_costs (one row per call of an op in
-- roofline_models, in a measured step, costed once per signature: op and recorded inputs), which
-- sql/roofline.sql reads. Binds: nothing. Reads
-- placed_ops (sql/ingest.sql: shape_dims, input_types, concrete_inputs as the trace recorded
-- Input Dims, Input type and Concrete Inputs), roofline_models, roofline_arg_positions, roofline_dtypes.
-- Bytes: every tensor input read once plus every output written once, elements × element size
-- (a lower bound of the traffic: what the op cannot avoid moving). A 0-dim argument beside a tensor of
-- one or more dimensions is a Python scalar the profiler wrapped (or a one-element tensor): it moves no
-- bytes and does not widen the output. An output's element size is its type's: the out= tensor's, which is
-- written once and not read; an in-place op's self's; an elementwise op's inputs' promoted type
-- (roofline_dtypes.category); any other op's first tensor input's. A zero-element
-- tensor moves nothing and does no arithmetic. Where a figure cannot be derived, it is NULL and
-- no_model_reason says why; no division here can give NaN or Infinity (a divisor of zero elements is guarded).

-- rl_numel: elements of a tensor of dims d (a 0-dim tensor has one), NULL for no tensor.
CREATE OR REPLACE TEMP MACRO rl_numel(d) AS CASE WHEN d IS NOT NULL THEN coalesce(list_product(d), 1.0) END;
-- rl_lead: elements of a tensor of dims d over all but its last k dimensions (1 when none are left),
-- a product rather than numel ÷ the last dims, so that a zero-length dimension there cannot make 0 ÷ 0.
CREATE OR REPLACE TEMP MACRO rl_lead(d, k) AS coalesce(list_product(list_slice(d, 1, greatest(len(d) - k, 0))), 1.0);
-- rl_ints: a Concrete Inputs text as an integer list ('[2, 2]' or '2'), NULL when it is neither.
CREATE OR REPLACE TEMP MACRO rl_ints(txt) AS
    CASE WHEN TRY_CAST(txt AS BIGINT) IS NOT NULL THEN [TRY_CAST(txt AS BIGINT)] ELSE TRY_CAST(txt AS BIGINT[]) END;
-- rl_at: spatial dimension i of a per-dimension argument (one value stands for every dimension).
CREATE OR REPLACE TEMP MACRO rl_at(l, i) AS CASE WHEN len(l) = 1 THEN l[1] ELSE l[i] END;
-- rl_window_out: output length of a sliding window (convolution, pooling), the PyTorch formula (NULL for stride 0).
CREATE OR REPLACE TEMP MACRO rl_window_out(n, k, s, p, d, ceil_mode) AS
    CASE WHEN ceil_mode THEN ceil((n + 2 * p - d * (k - 1) - 1) / nullif(s, 0))
         ELSE floor((n + 2 * p - d * (k - 1) - 1) / nullif(s, 0)) END + 1;

CREATE OR REPLACE TEMP TABLE roofline_costs AS
WITH positions AS (
    SELECT op, map(list(arg), list(position)) AS argpos FROM roofline_arg_positions GROUP BY op
),
sizes AS (
    SELECT map(list(type_name), list(element_bytes)) AS bytes_of, map(list(type_name), list(category)) AS category_of
    FROM roofline_dtypes
),
calls AS (
    -- the calls of modeled ops in measured steps, each with its signature: a call's cost depends only on its
    -- op and what the trace recorded of its inputs, and a step repeats the same few hundred signatures (a
    -- 5-step training trace: 67,765 calls, 1,661 signatures), so each signature is costed once
    SELECT o.event_id, o.name AS op, o.pid, o.tid, o.ts, o.dur, o.depth, o.step, o.phase, o.shape_dims,
           o.input_types, o.concrete_inputs,
           dense_rank() OVER (ORDER BY o.name, o.shape_dims, o.input_types, o.concrete_inputs) AS signature
    FROM placed_ops o
    WHERE o.step IS NOT NULL AND o.name IN (SELECT op FROM roofline_models)
),
shaped AS (
    SELECT c.signature, c.op, c.shape_dims, m.family, m.flops_per_element, coalesce(p.argpos, MAP {}) AS argpos,
           CASE WHEN json_valid(c.shape_dims) THEN from_json(c.shape_dims, '["JSON"]') END AS dims_json,
           TRY_CAST(c.input_types AS VARCHAR[]) AS types,
           TRY_CAST(c.concrete_inputs AS VARCHAR[]) AS ci,
           s.bytes_of, s.category_of
    FROM (SELECT DISTINCT ON (signature) signature, op, shape_dims, input_types, concrete_inputs FROM calls) c
    JOIN roofline_models m ON m.op = c.op
    LEFT JOIN positions p ON p.op = c.op, sizes s
),
typed AS (
    -- per argument: its element size (NULL: not a tensor of a known type), its promotion category and
    -- its dims; out_pos: the out= tensor's position, where the call has one
    SELECT *, list_transform(range(1, len(types) + 1), lambda i: bytes_of[types[i]]) AS esz,
           list_transform(range(1, len(types) + 1), lambda i: category_of[types[i]]) AS cat,
           CASE WHEN bytes_of[types[argpos['out']]] IS NOT NULL THEN argpos['out'] END AS out_pos
    FROM shaped
),
args AS (
    -- dims as doubles: a product of dims past int64 (a mutated or foreign trace) is a large figure, not an
    -- overflow error (blame.sql reads these costs: an error here would fail the whole profile)
    SELECT *,
           list_transform(range(1, len(types) + 1),
                          lambda i: CASE WHEN esz[i] IS NOT NULL THEN TRY_CAST(dims_json[i] AS DOUBLE[]) END) AS d
    FROM typed
),
inputs AS (
    -- the tensor inputs (positions; the out= tensor is no input), and those that move bytes: the ones of
    -- one or more dimensions, or every one where all are 0-dim
    SELECT *, coalesce(nullif(list_filter(tensor_in, lambda i: len(d[i]) > 0), []), tensor_in) AS moving
    FROM (SELECT *, list_filter(range(1, len(types) + 1), lambda i: d[i] IS NOT NULL AND i IS DISTINCT FROM out_pos)
                    AS tensor_in
          FROM args)
),
promoted AS (
    -- the input whose type an elementwise result takes, as PyTorch promotes: the highest category among the
    -- inputs, a tensor of one or more dimensions before a 0-dim one, then the widest
    SELECT *, list_filter(cand, lambda i: esz[i] = list_max(list_transform(cand, lambda j: esz[j])))[1] AS promoted_at
    FROM (SELECT *, coalesce(nullif(list_filter(top, lambda i: len(d[i]) > 0), []), top) AS cand
          FROM (SELECT *, list_filter(tensor_in, lambda i: cat[i] = list_max(list_transform(tensor_in, lambda j: cat[j])))
                          AS top
                FROM inputs))
),
output_typed AS (
    -- where the output's type comes from: the out= tensor; an in-place op's self (PyTorch names them with a
    -- trailing _); an elementwise op's promoted input; any other op's first tensor input (a norm's output is
    -- its input's type, whatever its float32 parameters)
    SELECT *, CASE WHEN out_pos IS NOT NULL THEN out_pos WHEN ends_with(op, '_') THEN 1
                   WHEN family = 'elementwise' THEN promoted_at ELSE tensor_in[1] END AS out_at
    FROM promoted
),
sized AS (
    SELECT *,
           coalesce(list_sum(list_transform(moving, lambda i: rl_numel(d[i]) * esz[i])), 0) AS in_bytes,
           esz[out_at] AS e_out,
           list_filter(d, lambda t: t IS NOT NULL) AS tensors,
           rl_numel(d[1]) AS n1, rl_numel(d[2]) AS n2, rl_numel(d[3]) AS n3,
           ci[argpos['stride']] AS stride_txt, ci[argpos['padding']] AS padding_txt, ci[argpos['dilation']] AS dilation_txt,
           ci[argpos['kernel']] AS kernel_txt, ci[argpos['size']] AS size_txt, ci[argpos['scale']] AS scale_txt,
           ci[argpos['dim']] AS dim_txt,
           coalesce(TRY_CAST(ci[argpos['transposed']] AS BOOLEAN), false) AS transposed,
           TRY_CAST(ci[argpos['causal']] AS BOOLEAN) AS causal,
           TRY_CAST(ci[argpos['training']] AS BOOLEAN) AS training,
           TRY_CAST(ci[argpos['ceil']] AS BOOLEAN) AS ceil_mode,
           TRY_CAST(ci[argpos['mask']] AS BOOLEAN[]) AS mask
    FROM output_typed
),
parsed AS (
    -- the Concrete Inputs the formulas below read, as integer lists, parsed once per call (inside the
    -- lambdas each use expanded rl_ints again: binding those trees cost more than the statement's work)
    SELECT *, rl_ints(stride_txt) AS stride_ints, rl_ints(padding_txt) AS padding_ints,
              rl_ints(dilation_txt) AS dilation_ints, rl_ints(kernel_txt) AS kernel_ints,
              rl_ints(size_txt) AS size_ints, rl_ints(dim_txt) AS dim_ints
    FROM sized
),
gemm AS (
    -- (batch, M, K, N) of the GEMM family: out = batch·M·N, FLOPs = 2·batch·M·K·N
    SELECT *,
        CASE family
            WHEN 'mm' THEN [1, d[1][1], d[1][2], d[2][2]]
            WHEN 'addmm' THEN [1, d[2][1], d[2][2], d[3][2]]
            WHEN 'bmm' THEN [d[1][1], d[1][2], d[1][3], d[2][3]]
            WHEN 'baddbmm' THEN [d[2][1], d[2][2], d[2][3], d[3][3]]
            WHEN 'linear' THEN [1, rl_lead(d[1], 1), d[1][-1], d[2][1]]
            WHEN 'matmul' THEN CASE
                WHEN len(d[1]) = 1 AND len(d[2]) = 1 THEN [1, 1, d[1][1], 1]
                WHEN len(d[2]) = 1 THEN [1, rl_lead(d[1], 1), d[1][-1], 1]
                WHEN len(d[1]) = 1 THEN [rl_lead(d[2], 2), 1, d[2][-2], d[2][-1]]
                ELSE [greatest(rl_lead(d[1], 2), rl_lead(d[2], 2)), d[1][-2], d[1][-1], d[2][-1]]
            END
        END::DOUBLE[] AS bmkn
    FROM parsed
),
windowed AS (
    -- convolution and pooling: per spatial dimension of the input, the output length
    SELECT *,
        CASE WHEN family = 'conv' THEN
            list_transform(range(1, len(d[1]) - 1), lambda i: CASE
                WHEN transposed THEN (d[1][2 + i] - 1) * rl_at(stride_ints, i) - 2 * rl_at(padding_ints, i)
                                     + coalesce(rl_at(dilation_ints, i), 1) * (d[2][2 + i] - 1) + 1
                ELSE rl_window_out(d[1][2 + i], d[2][2 + i], rl_at(stride_ints, i), rl_at(padding_ints, i),
                                   coalesce(rl_at(dilation_ints, i), 1), false) END)
             WHEN family = 'pool' THEN
            list_transform(range(1, 3), lambda i: rl_window_out(
                d[1][-3 + i], rl_at(kernel_ints, i),
                coalesce(rl_at(nullif(stride_ints, []), i), rl_at(kernel_ints, i)),
                coalesce(rl_at(padding_ints, i), 0), coalesce(rl_at(dilation_ints, i), 1),
                coalesce(ceil_mode, false)))
             WHEN family IN ('adaptive_pool', 'upsample') THEN
            coalesce(nullif(size_ints, []),
                     list_transform(range(1, 3), lambda i: floor(d[1][-3 + i] * rl_at(TRY_CAST(scale_txt AS DOUBLE[]), i))))
        END::DOUBLE[] AS out_spatial
    FROM gemm
),
costed AS (
    SELECT *,
        CASE
            WHEN family IN ('mm', 'addmm', 'bmm', 'baddbmm', 'linear', 'matmul')
                THEN 2 * bmkn[1] * bmkn[2] * bmkn[3] * bmkn[4]
            -- 2 · N · |weight| · output positions (transposed: input positions), as torch's flop counter
            WHEN family = 'conv'
                THEN 2 * d[1][1] * n2 * CASE WHEN transposed THEN list_product(d[1][3:]) ELSE list_product(out_spatial) END
            -- grad input and grad weight each cost one forward convolution (output_mask picks them)
            WHEN family = 'conv_backward'
                THEN 2 * d[1][1] * n3 * CASE WHEN transposed THEN list_product(d[2][3:]) ELSE list_product(d[1][3:]) END
                     * (CAST(mask[1] AS INTEGER) + CAST(mask[2] AS INTEGER))
            -- Q·Kᵀ and P·V: 2·(B·H)·L·S·(E + Ev); a causal mask skips half; backward: twice the forward
            WHEN family = 'attention'
                THEN 2 * rl_lead(d[1], 2) * d[1][-2] * d[2][-2] * (d[1][-1] + d[3][-1])
                     * CASE WHEN causal THEN 0.5 ELSE 1 END
            WHEN family = 'attention_backward'
                THEN 4 * rl_lead(d[2], 2) * d[2][-2] * d[3][-2] * (d[2][-1] + d[4][-1])
                     * CASE WHEN causal THEN 0.5 ELSE 1 END
            WHEN family = 'norm' AND argpos['training'] IS NOT NULL
                THEN n1 * CASE WHEN training THEN flops_per_element WHEN NOT training THEN 2 END
            WHEN family IN ('norm', 'norm_backward', 'softmax', 'reduction', 'adaptive_pool')
                THEN n1 * flops_per_element
            WHEN family = 'pool_backward' THEN n1 * flops_per_element
            WHEN family = 'pool'
                THEN rl_lead(d[1], 2) * list_product(out_spatial) * list_product(kernel_ints)
                     * CASE WHEN len(kernel_ints) = 1 THEN kernel_ints[1] ELSE 1 END * flops_per_element
            WHEN family = 'upsample' THEN rl_lead(d[1], 2) * list_product(out_spatial) * flops_per_element
            WHEN family IN ('cat', 'copy', 'embedding') THEN 0
        END AS model_flops,
        -- elements written: the op's output(s)
        CASE
            WHEN family IN ('mm', 'addmm', 'bmm', 'baddbmm', 'linear', 'matmul') THEN bmkn[1] * bmkn[2] * bmkn[4]
            WHEN family = 'conv'
                THEN d[1][1] * CASE WHEN transposed THEN d[2][2] * coalesce(TRY_CAST(ci[argpos['groups']] AS BIGINT), 1) ELSE d[2][1] END
                     * list_product(out_spatial)
            WHEN family = 'conv_backward'
                THEN CAST(mask[1] AS INTEGER) * n2 + CAST(mask[2] AS INTEGER) * n3 + CAST(mask[3] AS INTEGER) * d[1][2]
            WHEN family = 'attention' THEN rl_lead(d[1], 1) * d[3][-1]
            WHEN family = 'attention_backward' THEN n2 + n3 + rl_numel(d[4])
            WHEN family = 'elementwise'
                THEN list_product(list_transform(range(1, list_max(list_transform(tensors, lambda t: len(t))) + 1),
                        lambda j: list_max(list_transform(tensors, lambda t: CASE
                            WHEN len(t) - list_max(list_transform(tensors, lambda u: len(u))) + j >= 1
                            THEN t[len(t) - list_max(list_transform(tensors, lambda u: len(u))) + j] ELSE 1 END))))
            WHEN family IN ('norm', 'norm_backward', 'softmax') THEN n1
            WHEN family = 'pool'
                THEN rl_lead(d[1], 2) * list_product(out_spatial)
                     * CASE WHEN op = 'aten::max_pool2d_with_indices' THEN 1 + 8.0 / nullif(e_out, 0) ELSE 1 END
            WHEN family = 'pool_backward' THEN n2
            WHEN family IN ('adaptive_pool', 'upsample') THEN rl_lead(d[1], 2) * list_product(out_spatial)
            -- the kept dimensions' elements (a product, not numel ÷ the reduced ones: a zero-length one is no divisor)
            WHEN family = 'reduction'
                THEN coalesce(list_product(list_transform(range(1, len(d[1]) + 1), lambda i: CASE
                         WHEN list_contains(list_transform(coalesce(nullif(dim_ints, []), range(0, len(d[1]))),
                                                           lambda k: CASE WHEN k < 0 THEN len(d[1]) + k + 1 ELSE k + 1 END), i)
                         THEN 1 ELSE d[1][i] END)), 1)
            WHEN family = 'embedding' THEN n2 * d[1][-1]
            WHEN family = 'copy' THEN n1
        END AS out_elements
    FROM windowed
),
counted AS (
    -- elementwise FLOPs: the broadcast output's elements × the op's per-element arithmetic
    SELECT * REPLACE (CASE WHEN family = 'elementwise' THEN out_elements * flops_per_element ELSE model_flops END AS model_flops)
    FROM costed
),
judged AS (
    SELECT *,
        CASE WHEN shape_dims IS NULL THEN 'the trace records no input shapes (record_shapes was off)'
             WHEN family = 'cat' AND list_contains(types, 'TensorList') THEN 'the trace records no element type for a tensor list'
             WHEN family IN ('conv', 'pool', 'conv_backward') AND ci IS NULL
                 THEN 'the trace records no Concrete Inputs (stride, padding, output mask)'
             -- lists recorded in another step only, and no call there at this one's place (sql/ingest.sql)
             WHEN family IN ('conv', 'pool', 'conv_backward') AND NOT list_contains(types, 'ScalarList')
                 THEN 'the trace records no Concrete Inputs for this call''s scalar lists (stride, padding, output mask)'
             WHEN family = 'norm' AND argpos['training'] IS NOT NULL AND training IS NULL
                 THEN 'the trace records no Concrete Inputs (the training flag)'
             WHEN model_flops IS NULL OR out_elements IS NULL OR e_out IS NULL
                 THEN 'the recorded shapes do not fit the ' || family || ' formula'
        END AS no_model_reason,
        coalesce(types[out_at], list_filter(types, lambda t: bytes_of[t] IS NOT NULL)[1]) AS first_type
    FROM counted
)
SELECT c.event_id, c.op, c.pid, c.tid, c.ts, c.dur, c.depth, c.step, c.phase, c.shape_dims, j.family,
       -- the type of the op's output (its first tensor input's, an elementwise op's promoted type): the dtype the
       -- roof is taken for
       t.dtype, t.peak_class,
       -- FLOPs of the call (NULL where no_model_reason says why)
       CASE WHEN j.no_model_reason IS NULL THEN j.model_flops END AS flops,
       -- bytes the call moves: inputs once, outputs once (copy_: src read, self written;
       -- embedding: the indices, and the gathered rows read and written)
       CASE WHEN j.no_model_reason IS NOT NULL THEN NULL
            WHEN j.family = 'copy' THEN j.n2 * j.esz[2] + j.n1 * j.esz[1]
            WHEN j.family = 'embedding' THEN j.n2 * j.esz[2] + 2 * j.out_elements * j.esz[1]
            ELSE j.in_bytes + j.out_elements * j.e_out END AS bytes,
       j.no_model_reason
FROM calls c JOIN judged j USING (signature) LEFT JOIN roofline_dtypes t ON t.type_name = j.first_type;
