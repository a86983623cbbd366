"""The supported NumPy subset, lowered to loops over buffers.

Array expressions (``a + b``, ``np.exp(a)``, ``a > 0``) allocate their result and fill it with a
loop nest over the broadcast shape; in-place forms (``a += b``, ``a[1:] = b``) write through the
view.  Reductions carry accumulators through the nest.  Matrix products are ``linalg.matmul``
(BLAS in the backend).

``registry.py`` holds the table of handlers; each topic module registers its own when imported
(importing this package imports them all):

* ``arrays.py`` broadcasting, ``map_elements``, copies, operands; ``params.py`` argument binding;
  ``copies.py`` copies where NumPy returns a view (no handlers in these three);
* ``operators.py`` Python operators on arrays (called by ``lower/exprs.py``);
* ``axes.py`` (flips, swapaxes, moveaxis, expand_dims, squeeze, tril/triu), ``ufuncs.py``,
  ``ufunc_names.py`` (``np.add``, ``np.less``, ... by name),
  ``compare.py``, ``counting.py`` (bincount, histogram), ``complex.py``, ``creation.py``,
  ``ranges.py``, ``reductions.py``, ``stats.py`` (``np.interp`` too), ``shape.py``,
  ``linalg.py``, ``einsum.py``, ``sort.py``, ``tiling.py`` (meshgrid, tile, repeat);
* ``padding.py`` (``np.pad``: constant, edge, reflect, symmetric, wrap);
* ``splitting.py`` (``np.split/array_split/hsplit/vsplit/dsplit`` as views,
  ``np.broadcast_to/broadcast_arrays``, ``np.atleast_1d/2d/3d``);
* ``quantiles.py`` (``np.percentile/quantile``: sort and interpolate, ``library.py``);
* ``special.py`` ``scipy.special`` (expit, logsumexp, softmax, gammaln, ...), registered by
  name so that ``import zymase`` does not import SciPy;
* ``fft.py`` (``np.fft``: NumPy's pocketfft called from compiled code, ``library_fft.py``);
* ``random.py`` (``np.random``: generators and the legacy functions, NumPy's own draws);
* ``fancy.py`` ``x[mask]`` and ``x[idx]`` (called by ``lower/indexing.py``);
* ``products.py`` (``np.cross``, ``np.kron``, ``np.tensordot``);
* ``signal.py`` (``np.convolve``, ``np.correlate``, ``np.gradient``);
* ``nanfunctions.py`` (``np.nansum`` ... ``np.nanvar``, ``np.average``, ``np.ptp``);
* ``editing.py`` (``np.append/insert/delete``, ``np.take/take_along_axis``, ``np.rot90``,
  ``np.isin``).

A handler gets the function lowerer as ``lw`` and calls back into it (``lw.binop``,
``lw.truth``, ``lw.index_value``, ``lw.call_library``): nothing here imports ``lower/``.
"""

from . import (  # noqa: F401  (each registers its handlers)
    axes,
    compare,
    complex,
    counting,
    creation,
    editing,
    einsum,
    fft,
    linalg,
    nanfunctions,
    padding,
    products,
    quantiles,
    random,
    ranges,
    reductions,
    shape,
    signal,
    sort,
    special,
    splitting,
    stats,
    tiling,
    ufunc_names,
    ufuncs,
)
