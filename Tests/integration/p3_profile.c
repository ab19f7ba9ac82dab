/* Writes a Display P3 ICC profile (D65 white, P3 primaries, the sRGB transfer curve) with Little
 * CMS, for the colour tests of icc:keep (test_colour.py): neither Debian nor Pillow ships one.
 *   cc -o p3_profile p3_profile.c -llcms2 && ./p3_profile out.icc */
#include <lcms2.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: p3_profile out.icc\n"); return 2; }
    cmsCIExyY white = { 0.3127, 0.3290, 1.0 };
    cmsCIExyYTRIPLE primaries = { { 0.680, 0.320, 1.0 }, { 0.265, 0.690, 1.0 }, { 0.150, 0.060, 1.0 } };
    /* IEC 61966-2-1: the sRGB curve as a parametric type 4 curve. */
    cmsFloat64Number params[5] = { 2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045 };
    cmsToneCurve *curve = cmsBuildParametricToneCurve(NULL, 4, params);
    cmsToneCurve *curves[3] = { curve, curve, curve };
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    if (!profile) return 1;
    cmsMLU *description = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(description, "en", "US", "Display P3");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, description);
    int ok = cmsSaveProfileToFile(profile, argv[1]);
    cmsMLUfree(description);
    cmsFreeToneCurve(curve);
    cmsCloseProfile(profile);
    return ok ? 0 : 1;
}
