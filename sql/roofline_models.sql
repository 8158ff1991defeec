-- roofline_models.sql — which ops have a cost model, and what their recorded arguments mean.
--
-- Answers nothing by itself: it builds the rule tables sql/roofline.sql reads. Binds: nothing.
-- The op names here are the ops whose shapes the trace decoder keeps
-- (store/decode/events.py ROOFLINE_SHAPED_OPS; tests/test_roofline.py keeps the two equal).

-- roofline_models: one row per modeled op. family picks the formula in sql/roofline.sql;
-- flops_per_element (FLOP) is the per-element arithmetic of the op's formula, transcendental
-- functions counted as one, for the families whose FLOPs are elements × a constant (elementwise,
-- norm, reduction, softmax, pool, upsample). GEMM, convolution and attention count 2 FLOPs per
-- multiply-accumulate (as torch.utils.flop_counter does; bias adds are not counted).
CREATE OR REPLACE TEMP TABLE roofline_models AS
SELECT * FROM (VALUES
    ('aten::mm', 'mm', NULL), ('aten::addmm', 'addmm', NULL), ('aten::bmm', 'bmm', NULL),
    ('aten::baddbmm', 'baddbmm', NULL), ('aten::linear', 'linear', NULL), ('aten::matmul', 'matmul', NULL),
    ('aten::convolution', 'conv', NULL), ('aten::_convolution', 'conv', NULL),
    ('aten::cudnn_convolution', 'conv', NULL), ('aten::mkldnn_convolution', 'conv', NULL),
    ('aten::_slow_conv2d_forward', 'conv', NULL), ('aten::convolution_backward', 'conv_backward', NULL),
    ('aten::scaled_dot_product_attention', 'attention', NULL),
    ('aten::_scaled_dot_product_flash_attention', 'attention', NULL),
    ('aten::_scaled_dot_product_efficient_attention', 'attention', NULL),
    ('aten::_scaled_dot_product_cudnn_attention', 'attention', NULL),
    ('aten::_scaled_dot_product_flash_attention_for_cpu', 'attention', NULL),
    ('aten::_scaled_dot_product_flash_attention_backward', 'attention_backward', NULL),
    ('aten::_scaled_dot_product_efficient_attention_backward', 'attention_backward', NULL),
    ('aten::_scaled_dot_product_cudnn_attention_backward', 'attention_backward', NULL),
    ('aten::_scaled_dot_product_flash_attention_for_cpu_backward', 'attention_backward', NULL),
    -- elementwise: one output element per broadcast position
    ('aten::add', 'elementwise', 1), ('aten::add_', 'elementwise', 1), ('aten::sub', 'elementwise', 1),
    ('aten::sub_', 'elementwise', 1), ('aten::mul', 'elementwise', 1), ('aten::mul_', 'elementwise', 1),
    ('aten::div', 'elementwise', 1), ('aten::div_', 'elementwise', 1), ('aten::neg', 'elementwise', 1),
    ('aten::exp', 'elementwise', 1), ('aten::sqrt', 'elementwise', 1), ('aten::rsqrt', 'elementwise', 1),
    ('aten::pow', 'elementwise', 1), ('aten::where', 'elementwise', 1),
    ('aten::clamp', 'elementwise', 2), ('aten::clamp_', 'elementwise', 2),                -- max, min
    ('aten::clamp_min', 'elementwise', 1), ('aten::clamp_min_', 'elementwise', 1),
    ('aten::relu', 'elementwise', 1), ('aten::relu_', 'elementwise', 1),
    ('aten::gelu', 'elementwise', 5),                                                     -- 0.5·x·(1 + erf(x/√2))
    ('aten::silu', 'elementwise', 4), ('aten::silu_', 'elementwise', 4),                  -- x / (1 + exp(−x))
    ('aten::sigmoid', 'elementwise', 4), ('aten::sigmoid_', 'elementwise', 4),            -- 1 / (1 + exp(−x))
    ('aten::tanh', 'elementwise', 1),
    ('aten::hardswish', 'elementwise', 5), ('aten::hardswish_', 'elementwise', 5),        -- x·min(max(x+3, 0), 6)/6
    ('aten::leaky_relu', 'elementwise', 2), ('aten::leaky_relu_', 'elementwise', 2),
    ('aten::threshold_backward', 'elementwise', 1),                                       -- select
    ('aten::silu_backward', 'elementwise', 9),                                            -- g·s·(1 + x·(1 − s)), s = sigmoid(x)
    ('aten::gelu_backward', 'elementwise', 11),                                           -- g·(Φ(x) + x·φ(x))
    ('aten::sigmoid_backward', 'elementwise', 3),                                         -- g·y·(1 − y)
    ('aten::tanh_backward', 'elementwise', 3),                                            -- g·(1 − y²)
    ('aten::hardswish_backward', 'elementwise', 4), ('aten::leaky_relu_backward', 'elementwise', 2),
    -- norms, per element of the normalized input: training (or layer/group norm, which always
    -- compute their statistics): mean 1, variance 3, normalize 2, affine 2 = 8; batch norm in
    -- inference folds to a scale and a shift: 2; backward: 12 (x̂ 2, g·w 1, two reductions 2 and
    -- their products 2, dx 3, dγ/dβ 2)
    ('aten::batch_norm', 'norm', 8), ('aten::native_batch_norm', 'norm', 8),
    ('aten::_native_batch_norm_legit_no_training', 'norm', 2), ('aten::cudnn_batch_norm', 'norm', 8),
    ('aten::native_batch_norm_backward', 'norm_backward', 12), ('aten::cudnn_batch_norm_backward', 'norm_backward', 12),
    ('aten::layer_norm', 'norm', 8), ('aten::native_layer_norm', 'norm', 8),
    ('aten::native_layer_norm_backward', 'norm_backward', 12),
    ('aten::group_norm', 'norm', 8), ('aten::native_group_norm', 'norm', 8),
    ('aten::native_group_norm_backward', 'norm_backward', 12),
    -- pooling: one compare (max) or add (avg) per window element of each output
    ('aten::max_pool2d', 'pool', 1), ('aten::max_pool2d_with_indices', 'pool', 1), ('aten::avg_pool2d', 'pool', 1),
    ('aten::max_pool2d_with_indices_backward', 'pool_backward', 1),
    ('aten::adaptive_avg_pool2d', 'adaptive_pool', 1), ('aten::_adaptive_avg_pool2d', 'adaptive_pool', 1),
    -- upsampling, per output element: nearest copies; bilinear does 3 lerps of 3 FLOPs
    ('aten::upsample_nearest2d', 'upsample', 0), ('aten::upsample_bilinear2d', 'upsample', 9),
    -- bytes only (their FLOPs are a true 0): cat, copy_ (aten::to and _to_copy move data through the copy_ they call)
    ('aten::cat', 'cat', 0), ('aten::copy_', 'copy', 0), ('aten::embedding', 'embedding', 0),
    -- reductions: one op per input element; softmax: max, subtract, exp, sum, divide (log_softmax: log instead)
    ('aten::sum', 'reduction', 1), ('aten::mean', 'reduction', 1), ('aten::amax', 'reduction', 1),
    ('aten::softmax', 'softmax', 5), ('aten::_softmax', 'softmax', 5),
    ('aten::log_softmax', 'softmax', 5), ('aten::_log_softmax', 'softmax', 5)
) AS t(op, family, flops_per_element);

-- roofline_arg_positions: where an op's arguments sit in its recorded Input Dims / Concrete Inputs
-- lists (1-based, the op's schema order). Tensor arguments: x (input), w (weight), bias,
-- q/k/v/grad (attention), main (the tensor whose elements drive an elementwise-like formula).
-- Concrete arguments: stride, padding, dilation, transposed, output_padding, groups, kernel, ceil,
-- causal, training, mask (convolution_backward's output_mask), dim, size, scale, out.
CREATE OR REPLACE TEMP TABLE roofline_arg_positions AS
SELECT * FROM (VALUES
    ('aten::convolution', 'stride', 4), ('aten::convolution', 'padding', 5), ('aten::convolution', 'dilation', 6),
    ('aten::convolution', 'transposed', 7), ('aten::convolution', 'output_padding', 8), ('aten::convolution', 'groups', 9),
    ('aten::_convolution', 'stride', 4), ('aten::_convolution', 'padding', 5), ('aten::_convolution', 'dilation', 6),
    ('aten::_convolution', 'transposed', 7), ('aten::_convolution', 'output_padding', 8), ('aten::_convolution', 'groups', 9),
    -- cudnn_convolution(input, weight, padding, stride, dilation, groups, …): no bias argument
    ('aten::cudnn_convolution', 'padding', 3), ('aten::cudnn_convolution', 'stride', 4),
    ('aten::cudnn_convolution', 'dilation', 5), ('aten::cudnn_convolution', 'groups', 6),
    -- mkldnn_convolution(input, weight, bias, padding, stride, dilation, groups)
    ('aten::mkldnn_convolution', 'padding', 4), ('aten::mkldnn_convolution', 'stride', 5),
    ('aten::mkldnn_convolution', 'dilation', 6), ('aten::mkldnn_convolution', 'groups', 7),
    -- _slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding): dilation 1, groups 1
    ('aten::_slow_conv2d_forward', 'stride', 5), ('aten::_slow_conv2d_forward', 'padding', 6),
    -- convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
    --                      transposed, output_padding, groups, output_mask)
    ('aten::convolution_backward', 'transposed', 8), ('aten::convolution_backward', 'groups', 10),
    ('aten::convolution_backward', 'mask', 11),
    -- is_causal of each attention op
    ('aten::scaled_dot_product_attention', 'causal', 6),
    ('aten::_scaled_dot_product_flash_attention', 'causal', 5),
    ('aten::_scaled_dot_product_flash_attention_for_cpu', 'causal', 5),
    ('aten::_scaled_dot_product_efficient_attention', 'causal', 7),
    ('aten::_scaled_dot_product_cudnn_attention', 'causal', 7),
    ('aten::_scaled_dot_product_flash_attention_backward', 'causal', 12),
    ('aten::_scaled_dot_product_flash_attention_for_cpu_backward', 'causal', 8),
    ('aten::_scaled_dot_product_efficient_attention_backward', 'causal', 12),
    ('aten::_scaled_dot_product_cudnn_attention_backward', 'causal', 15),
    -- batch norm's training flag (layer and group norm always normalize with their own statistics)
    ('aten::batch_norm', 'training', 6), ('aten::native_batch_norm', 'training', 6), ('aten::cudnn_batch_norm', 'training', 6),
    -- pooling: (self, kernel_size, stride, padding, dilation, ceil_mode) / avg: (…, padding, ceil_mode, …)
    ('aten::max_pool2d', 'kernel', 2), ('aten::max_pool2d', 'stride', 3), ('aten::max_pool2d', 'padding', 4),
    ('aten::max_pool2d', 'dilation', 5), ('aten::max_pool2d', 'ceil', 6),
    ('aten::max_pool2d_with_indices', 'kernel', 2), ('aten::max_pool2d_with_indices', 'stride', 3),
    ('aten::max_pool2d_with_indices', 'padding', 4), ('aten::max_pool2d_with_indices', 'dilation', 5),
    ('aten::max_pool2d_with_indices', 'ceil', 6),
    ('aten::avg_pool2d', 'kernel', 2), ('aten::avg_pool2d', 'stride', 3), ('aten::avg_pool2d', 'padding', 4),
    ('aten::avg_pool2d', 'ceil', 5),
    ('aten::adaptive_avg_pool2d', 'size', 2), ('aten::_adaptive_avg_pool2d', 'size', 2),
    -- upsample_*2d(input, output_size, [align_corners,] scale_factors) (the .vec overloads)
    ('aten::upsample_nearest2d', 'size', 2), ('aten::upsample_nearest2d', 'scale', 3),
    ('aten::upsample_bilinear2d', 'size', 2), ('aten::upsample_bilinear2d', 'scale', 4),
    -- reductions over dim (sum/mean/amax(self, dim, keepdim, …)); empty: every dimension
    ('aten::sum', 'dim', 2), ('aten::mean', 'dim', 2), ('aten::amax', 'dim', 2),
    -- out: the out= tensor of the op's .out overload (one past the functional schema's arguments), which
    -- the op writes once and never reads; it counts only where the recorded argument there is a tensor
    ('aten::mm', 'out', 3), ('aten::bmm', 'out', 3), ('aten::matmul', 'out', 3), ('aten::linear', 'out', 4),
    ('aten::addmm', 'out', 6), ('aten::baddbmm', 'out', 6),
    ('aten::add', 'out', 4), ('aten::sub', 'out', 4), ('aten::mul', 'out', 3), ('aten::div', 'out', 3),
    ('aten::neg', 'out', 2), ('aten::exp', 'out', 2), ('aten::sqrt', 'out', 2), ('aten::rsqrt', 'out', 2),
    ('aten::pow', 'out', 3), ('aten::where', 'out', 4), ('aten::clamp', 'out', 4), ('aten::clamp_min', 'out', 3),
    ('aten::gelu', 'out', 3), ('aten::silu', 'out', 2), ('aten::sigmoid', 'out', 2), ('aten::tanh', 'out', 2),
    ('aten::hardswish', 'out', 2), ('aten::leaky_relu', 'out', 3),
    ('aten::threshold_backward', 'out', 4), ('aten::silu_backward', 'out', 3), ('aten::gelu_backward', 'out', 4),
    ('aten::sigmoid_backward', 'out', 3), ('aten::tanh_backward', 'out', 3), ('aten::hardswish_backward', 'out', 3),
    ('aten::leaky_relu_backward', 'out', 5),
    ('aten::sum', 'out', 5), ('aten::mean', 'out', 5), ('aten::amax', 'out', 4),
    ('aten::softmax', 'out', 4), ('aten::_softmax', 'out', 4), ('aten::log_softmax', 'out', 4),
    ('aten::_log_softmax', 'out', 4)
) AS t(op, arg, position);

-- roofline_dtypes: the element types the profiler records ("Input type"), their size, the
-- peak class sql/device_peaks.sql keys on (NULL: no compute roof for that type) and the type-promotion
-- category (bool 0 < integer 1 < floating 2 < complex 3): an op's result takes the widest type of the
-- highest category among its tensors of one or more dimensions, as PyTorch promotes (a Python scalar,
-- recorded as a 0-dim double or long tensor, does not widen a float32 result).
CREATE OR REPLACE TEMP TABLE roofline_dtypes AS
SELECT * FROM (VALUES
    ('float', 4, 'float32', 'fp32', 2), ('double', 8, 'float64', 'fp64', 2),
    ('c10::Half', 2, 'float16', 'fp16', 2), ('c10::BFloat16', 2, 'bfloat16', 'bf16', 2),
    ('c10::Float8_e4m3fn', 1, 'float8_e4m3fn', 'fp8', 2), ('c10::Float8_e5m2', 1, 'float8_e5m2', 'fp8', 2),
    ('c10::Float8_e4m3fnuz', 1, 'float8_e4m3fnuz', 'fp8', 2), ('c10::Float8_e5m2fnuz', 1, 'float8_e5m2fnuz', 'fp8', 2),
    ('c10::Float4_e2m1fn_x2', 1, 'float4_e2m1fn_x2', 'fp4', 2),
    ('long int', 8, 'int64', NULL, 1), ('long', 8, 'int64', NULL, 1), ('int', 4, 'int32', NULL, 1),
    ('short int', 2, 'int16', NULL, 1), ('short', 2, 'int16', NULL, 1), ('signed char', 1, 'int8', NULL, 1),
    ('unsigned char', 1, 'uint8', NULL, 1), ('bool', 1, 'bool', NULL, 0),
    ('c10::complex<float>', 8, 'complex64', NULL, 3), ('c10::complex<double>', 16, 'complex128', NULL, 3)
) AS t(type_name, element_bytes, dtype, peak_class, category);
