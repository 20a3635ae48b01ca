"""Missing data: nanmean/nanstd/nanargmax/nanpercentile, nan_to_num with custom values."""
import numpy as np

d = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 6.0], [7.0, 8.0, np.inf]])
fin = np.where(np.isfinite(d), d, np.nan)
m = np.nanmean(fin, axis=0)
s = np.nanstd(fin, axis=1, ddof=0)
am = np.nanargmax(fin, axis=1)
p = np.nanpercentile(fin, [25, 75])
fix = np.nan_to_num(d, nan=-1.0, posinf=99.0)
med = np.nanmedian(fin)
cs = np.nancumsum(fin, axis=1)
mx = np.nanmax(fin * 2)
frac = np.isnan(d).mean()
