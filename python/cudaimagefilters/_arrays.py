"""Array kinds in and out: itk.Image, NumPy, CuPy and torch (CPU or CUDA).

Every function of the package takes one of these and returns the same
kind. GPU arrays (CuPy, torch CUDA) stay on the GPU: the extension reads
and writes them in place through DLPack, on the caller's current CUDA
stream. Host arrays (NumPy, itk.Image, torch CPU) are copied to the GPU and
back when the GPU runs. Non-contiguous arrays are first copied into a
C-contiguous array of the same kind (documented, and cheap next to a
filter).

Image axes: arrays are in C order, the slowest axis first (z, y, x), as
``itk.array_view_from_image`` gives them. Per-axis parameters (radius,
spacing, origin, sigma) are given in ITK's order (x, y, z), as the ITK
functional API takes them.
"""

from __future__ import annotations

import math
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

NUMPY = "numpy"
ITK = "itk"
CUPY = "cupy"
TORCH = "torch"

# DLPack device types
_DL_CPU = 1
_DL_CUDA = 2


def _is_itk_image(x: Any) -> bool:
    t = type(x)
    return t.__module__.startswith("itk") and t.__name__.startswith("itkImage") and hasattr(x, "GetSpacing")


def _torch():
    return sys.modules.get("torch")


def _cupy():
    return sys.modules.get("cupy")


def kind_of(x: Any) -> str:
    """The kind of an image argument; raises TypeError for others."""
    if isinstance(x, np.ndarray):
        return NUMPY
    if _is_itk_image(x):
        return ITK
    cp = _cupy()
    if cp is not None and isinstance(x, cp.ndarray):
        return CUPY
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return TORCH
    raise TypeError(
        f"expected an itk.Image, a NumPy array, a CuPy array or a torch tensor, not {type(x).__module__}.{type(x).__name__}"
    )


def check_device(x: Any, what: str = "image") -> None:
    """Arrays must be in host memory or on a CUDA device (any device: a call
    runs on its GPU arrays' device, in that device's current stream)."""
    dev = getattr(x, "__dlpack_device__", None)
    if dev is None:
        return
    try:
        device_type, _ = dev()
    except Exception:  # noqa: BLE001 - an object that cannot say: let the kind check decide
        return
    if int(device_type) not in (_DL_CPU, _DL_CUDA, 3):  # 3: CUDA host (pinned) memory
        raise ValueError(f"the {what} is on DLPack device type {int(device_type)}; host memory or CUDA only")


def is_gpu(x: Any, kind: str) -> bool:
    if kind == CUPY:
        return True
    if kind == TORCH:
        return x.device.type == "cuda"
    return False


def stream_of(x: Any, kind: str) -> int:
    """The caller's current CUDA stream on a GPU array's device (0: that
    device's legacy default stream). CuPy and torch keep one per device."""
    if kind == CUPY:
        with x.device:
            return int(_cupy().cuda.get_current_stream().ptr)
    if kind == TORCH and x.device.type == "cuda":
        return int(_torch().cuda.current_stream(x.device).cuda_stream)
    return 0


@dataclass
class Geometry:
    """Spacing, origin and direction in ITK's order (x fastest). The origin is
    the physical point of the buffer's first voxel (index 0)."""

    spacing: Tuple[float, ...]
    origin: Tuple[float, ...]
    direction: np.ndarray  # D x D
    _key: Optional[bytes] = field(default=None, init=False, repr=False, compare=False)

    @property
    def dimension(self) -> int:
        return len(self.spacing)

    def key(self) -> bytes:
        """The grid to the last bit (spacing, origin, direction; signed zeros
        and NaNs as they are): the key of caches of what follows from a grid
        alone, since equal keys are equal grids. Made at the first call (the
        package does not change a Geometry once made)."""
        if self._key is None:
            values = (*self.spacing, *self.origin)
            direction = np.asarray(self.direction, dtype=np.float64).tobytes()
            self._key = struct.pack(f"{len(values)}d", *values) + direction
        return self._key


#: How many values each cache of grid_cached keeps (0: none, as before the
#: caches existed: benchmarks/python_overhead.py --uncached-grids).
GRID_CACHE_SIZE = 64


def grid_cached(cache: Dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """cache[key], made by make() when missing: for what follows from image
    grids alone (keys from Geometry.key(), bit for bit), so that repeated
    calls on the same grids skip the small-matrix arithmetic and checks. The
    cache starts afresh once it holds GRID_CACHE_SIZE values."""
    value = cache.get(key)
    if value is None:
        value = make()
        if len(cache) >= GRID_CACHE_SIZE:
            cache.clear()
        if GRID_CACHE_SIZE > 0:
            cache[key] = value
    return value


def _per_axis(value, ndim: int, what: str, default: float) -> Tuple[float, ...]:
    if value is None:
        return tuple([default] * ndim)
    if np.isscalar(value):
        return tuple([float(value)] * ndim)
    values = tuple(float(v) for v in value)
    if len(values) != ndim:
        raise ValueError(f"{what} needs {ndim} values (x, y, z order), not {len(values)}")
    return values


_IDENTITY = {}
for _d in (1, 2, 3):
    _IDENTITY[_d] = np.eye(_d)
    _IDENTITY[_d].setflags(write=False)
#: an array's spacing and origin without keywords (1 and 0)
_ONES = {_d: tuple([1.0] * _d) for _d in (1, 2, 3)}
_ZEROS = {_d: tuple([0.0] * _d) for _d in (1, 2, 3)}


def itk_matrix(matrix: Any, d: int) -> np.ndarray:
    """An itk.Matrix (a direction, a transform's matrix) as a D x D float64
    array: its elements read one by one, as itk.array_from_matrix gives them
    at about half the cost."""
    return np.array([[matrix(i, j) for j in range(d)] for i in range(d)], dtype=np.float64)


def geometry_from(
    x: Any, kind: str, ndim: int, spacing=None, origin=None, direction=None
) -> Geometry:
    """The image's geometry: an itk.Image's own, or the keywords (ITK order) for arrays."""
    if kind == ITK:
        if spacing is not None or origin is not None or direction is not None:
            raise ValueError("spacing, origin and direction come from the itk.Image; do not pass them too")
        d = x.GetImageDimension()
        start = x.GetBufferedRegion().GetIndex()
        # the buffer's first voxel becomes index 0: its physical point is the origin
        first = x.GetOrigin() if all(int(start[i]) == 0 for i in range(d)) else x.TransformIndexToPhysicalPoint(start)
        origin = tuple(float(first[i]) for i in range(d))
        spacing = x.GetSpacing()
        return Geometry(tuple(float(spacing[i]) for i in range(d)), origin, itk_matrix(x.GetDirection(), d))
    if spacing is None and origin is None and direction is None:
        # nothing to check; a Geometry of its own for each call (callers may keep it: PackedMask)
        return Geometry(_ONES[ndim], _ZEROS[ndim], _IDENTITY[ndim])
    s = _per_axis(spacing, ndim, "spacing", 1.0)
    if any(not (v > 0 and math.isfinite(v)) for v in s):
        raise ValueError(f"spacing must be positive and finite, not {s}")
    o = _per_axis(origin, ndim, "origin", 0.0)
    if direction is None:
        dm = _IDENTITY[ndim]
    else:
        dm = np.asarray(direction, dtype=np.float64)
        if dm.shape != (ndim, ndim):
            raise ValueError(f"direction must be a {ndim} x {ndim} matrix")
        if not _invertible(dm):
            raise ValueError("direction must be invertible")
    return Geometry(s, o, dm)


_INVERTIBLE: Dict[bytes, bool] = {}


def _invertible(direction: np.ndarray) -> bool:
    """|det| >= 1e-12 for a square float64 matrix, kept for recent matrices."""
    return grid_cached(_INVERTIBLE, direction.tobytes(), lambda: not abs(np.linalg.det(direction)) < 1e-12)


class ImageArg:
    """One image argument, ready for the extension. Its geometry and its
    stream (None: stream_of) are read when first asked for (most filters
    never need the geometry, and companions such as sigma maps no stream)."""

    __slots__ = ("original", "kind", "array", "on_gpu", "_stream", "ndim", "shape", "copied", "_geometry", "_keywords")

    def __init__(self, original, kind, array, on_gpu, stream, ndim, geometry=None, copied=False, keywords=None):
        self.original = original
        self.kind = kind
        self.array = array  # C-contiguous: numpy, cupy or torch
        self.on_gpu = on_gpu
        self._stream = stream
        self.ndim = ndim
        self.shape = tuple(map(int, array.shape))
        self.copied = copied  # made contiguous by a copy
        self._geometry = geometry
        self._keywords = keywords or {}

    @property
    def stream(self) -> int:
        """The caller's current CUDA stream on the array's device (0 for host arrays)."""
        if self._stream is None:
            self._stream = stream_of(self.original, self.kind)
        return self._stream

    @property
    def geometry(self) -> Optional[Geometry]:
        if self._geometry is None and self.ndim in (1, 2, 3):
            self._geometry = geometry_from(self.original, self.kind, self.ndim, **self._keywords)
        return self._geometry


def image_arg(x: Any, *, what: str = "image", spacing=None, origin=None, direction=None) -> ImageArg:
    """Reads an image argument of any supported kind (see the module docs)."""
    check_device(x, what)
    kind = kind_of(x)
    copied = False
    if kind == ITK:
        import itk

        arr = itk.array_view_from_image(x)
        ndim = x.GetImageDimension()
        if arr.ndim != ndim:
            raise TypeError(f"the {what} must be a scalar image (its pixels have {arr.shape[-1]} components)")
    elif kind == NUMPY:
        arr = x
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
            copied = True
        ndim = arr.ndim
    elif kind == CUPY:
        arr = x
        if not arr.flags.c_contiguous:
            arr = _cupy().ascontiguousarray(arr)
            copied = True
        ndim = arr.ndim
    else:
        arr = x.detach() if x.requires_grad else x
        if not arr.is_contiguous():
            arr = arr.contiguous()
            copied = True
        if arr.device.type not in ("cpu", "cuda"):
            raise ValueError(f"the {what} is a torch tensor on {arr.device}; CPU or CUDA only")
        ndim = arr.dim()
    on_gpu = is_gpu(x, kind)
    keywords = {}
    if spacing is not None or origin is not None or direction is not None:
        keywords = dict(spacing=spacing, origin=origin, direction=direction)
        if kind == ITK:
            raise ValueError("spacing, origin and direction come from the itk.Image; do not pass them too")
    return ImageArg(x, kind, arr, on_gpu, None, ndim, None, copied, keywords)


def empty_output(
    arg: ImageArg,
    shape: Sequence[int],
    dtype,
    geometry: Optional[Geometry] = None,
    components: int = 0,
    covariant: bool = False,
):
    """An uninitialised result of the argument's kind and side: (result, array the core writes).

    For an itk.Image argument the result is an itk.Image of the pixel type
    `dtype`, with the input's buffered region and geometry when the shape is
    the input's (or `geometry` and index 0 when given), and the array is a
    view of its buffer. With `components` > 0 each pixel is a vector of that
    many `dtype` values (an itk.Image of itk.Vector pixels, or with
    `covariant` itk.CovariantVector ones as ITK's gradient filters write;
    arrays get a last axis of that length)."""
    shape = tuple(map(int, shape))
    full = shape + ((int(components),) if components else ())
    if arg.kind == NUMPY:
        out = np.empty(full, dtype=np.dtype(dtype))
        return out, out
    if arg.kind == ITK:
        import itk

        pixel = getattr(itk, _ITK_PIXEL[dtype_name(dtype)])
        if components:
            pixel = (itk.CovariantVector if covariant else itk.Vector)[pixel, int(components)]
        image = itk.Image[pixel, len(shape)].New()
        if geometry is None and shape == arg.shape:
            image.SetRegions(arg.original.GetBufferedRegion())
            image.CopyInformation(arg.original)
        else:
            region = itk.ImageRegion[len(shape)]()
            region.SetSize([int(n) for n in reversed(shape)])
            image.SetRegions(region)
            set_geometry(image, geometry if geometry is not None else arg.geometry)
        image.Allocate()
        return image, itk.array_view_from_image(image)
    if arg.kind == CUPY:
        cp = _cupy()
        with arg.original.device:
            out = cp.empty(full, dtype=np.dtype(dtype))
        return out, out
    torch = _torch()
    out = torch.empty(full, dtype=torch_dtype(dtype), device=arg.array.device)
    return out, out


_ITK_PIXEL = {"uint8": "UC", "int16": "SS", "uint16": "US", "float32": "F", "float64": "D"}


_TORCH_DTYPES = {
    "uint8": "uint8",
    "int16": "int16",
    "uint16": "uint16",
    "uint32": "uint32",
    "float32": "float32",
    "float64": "float64",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool",
}


def torch_dtype(dtype):
    torch = _torch()
    name = dtype_name(dtype)
    if name not in _TORCH_DTYPES or not hasattr(torch, _TORCH_DTYPES[name]):
        raise TypeError(f"no torch dtype for {name}")
    return getattr(torch, _TORCH_DTYPES[name])


_DTYPE_NAMES: Dict[Any, str] = {}


def dtype_name(dtype: Any) -> str:
    """``np.dtype(dtype).name``, remembered per dtype: NumPy works a dtype's
    name out in Python at every access (microseconds a time)."""
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):  # TypeError: not hashable (a structured dtype's field list)
        pass
    name = np.dtype(dtype).name
    try:
        if len(_DTYPE_NAMES) < 256:
            _DTYPE_NAMES[dtype] = name
    except TypeError:
        pass
    return name


def numpy_dtype(arr: Any):
    """The NumPy dtype of an array of any kind."""
    if isinstance(arr, np.ndarray):
        return arr.dtype
    torch = _torch()
    if torch is not None and isinstance(arr, torch.Tensor):
        name = str(arr.dtype).replace("torch.", "")
        try:
            return np.dtype(name)
        except TypeError:
            raise TypeError(f"pixel type {name} is not supported") from None
    return np.dtype(arr.dtype)


def set_geometry(image: Any, geometry: Geometry) -> None:
    import itk

    image.SetSpacing([float(v) for v in geometry.spacing])
    image.SetOrigin([float(v) for v in geometry.origin])
    image.SetDirection(itk.matrix_from_array(np.array(geometry.direction, dtype=np.float64)))


def itk_view(arg: ImageArg) -> Any:
    """An itk.Image of a host argument (the input itself for itk.Image), for ITK's own filters."""
    import itk

    if arg.kind == ITK:
        return arg.original
    host = to_numpy(arg.array)
    image = itk.image_view_from_array(host)
    set_geometry(image, arg.geometry)
    image._cif_keep = host  # the view must not outlive its buffer
    return image


def to_numpy(arr: Any) -> np.ndarray:
    """A host NumPy array (a copy for GPU arrays)."""
    if isinstance(arr, np.ndarray):
        return arr
    cp = _cupy()
    if cp is not None and isinstance(arr, cp.ndarray):
        return cp.asnumpy(arr)
    torch = _torch()
    if torch is not None and isinstance(arr, torch.Tensor):
        return arr.detach().cpu().numpy()
    return np.asarray(arr)


def from_numpy_like(arg: ImageArg, host: np.ndarray) -> Any:
    """`host` moved to the argument's kind and side."""
    if arg.kind in (NUMPY, ITK):
        return host
    if arg.kind == CUPY:
        cp = _cupy()
        with arg.original.device:
            return cp.asarray(host)
    torch = _torch()
    return torch.from_numpy(np.ascontiguousarray(host)).to(arg.array.device)
