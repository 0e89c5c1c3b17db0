#pragma once
inline constexpr int kShapesSys = 11;
