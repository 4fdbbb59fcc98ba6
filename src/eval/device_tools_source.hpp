#pragma once
// The text of the evaluator's own device kernels (device_tools_source.cpp), compiled with
// KF_CUDA (1 for CUDA, 0 for OpenCL) and KF_DT (the element type: 0 f16, 1 f32, 2 f64, 3 i32,
// 4 i64, 5 u8, 6 bf16) defined.

namespace kf {

extern const char* const kDeviceToolsSource;

}  // namespace kf
