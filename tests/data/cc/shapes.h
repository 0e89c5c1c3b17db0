#pragma once
inline constexpr int kShapesBase = 3;
