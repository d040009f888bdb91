/* A two-axis line plot as SVG, with no library: `symc bench --sweep --plot FILE.svg`.
 *
 * Approach. A fixed canvas (760 x 440 px) with the plot area inside margins;
 * each axis is linear, its range widened to "nice" tick steps (1, 2 or 5
 * times a power of ten, about six ticks): x from the smallest to the largest
 * point, each y axis from 0 to its series' largest value. Series 1 (left
 * axis) is a solid polyline with circles at the points, series 2 (right axis)
 * a dashed polyline with squares; every marker carries a <title> (the
 * tooltip) with the point's label and values, and a class (s1, s2) that tests
 * count. Text is XML-escaped. The file is written to PATH.tmp and renamed, so
 * a failed write leaves no half file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "tools/plot.h"

enum { W = 760, H = 440, ML = 80, MR = 90, MT = 70, MB = 60 };

static void xml_text(FILE *f, const char *s) {
    for (; s && *s; s++) switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
        }
}

/* a tick step of 1, 2 or 5 times a power of ten giving about `target` ticks over range */
static double nice_step(double range, int target) {
    if (!(range > 0) || !isfinite(range)) return 1;
    double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

typedef struct axis {
    double lo, hi, step;
} axis;

static axis y_axis(const double *v, int n) {
    double mx = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > mx) mx = v[i];
    if (!(mx > 0)) mx = 1;
    axis a = {0, 0, nice_step(mx, 5)};
    a.hi = ceil(mx / a.step - 1e-9) * a.step;
    if (a.hi < mx) a.hi += a.step;
    return a;
}

static double px_x(const axis *a, double v) { return ML + (v - a->lo) / (a->hi - a->lo) * (W - ML - MR); }
static double px_y(const axis *a, double v) { return H - MB - (v - a->lo) / (a->hi - a->lo) * (H - MT - MB); }

static void series(FILE *f, const tool_plot *p, const axis *ax, const axis *ay, const double *y, int which) {
    const char *color = which == 1 ? "#1f77b4" : "#d95f02";
    fprintf(f, "<polyline class=\"line%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", which, color,
            which == 2 ? " stroke-dasharray=\"6,4\"" : "");
    for (int i = 0, first = 1; i < p->n; i++)
        if (isfinite(y[i])) {
            fprintf(f, "%s%.2f,%.2f", first ? "" : " ", px_x(ax, p->x[i]), px_y(ay, y[i]));
            first = 0;
        }
    fprintf(f, "\"/>\n");
    for (int i = 0; i < p->n; i++) {
        if (!isfinite(y[i])) continue;
        double cx = px_x(ax, p->x[i]), cy = px_y(ay, y[i]);
        if (which == 1) fprintf(f, "<circle class=\"s1\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\">", cx, cy, color);
        else
            fprintf(f, "<rect class=\"s2\" x=\"%.2f\" y=\"%.2f\" width=\"8\" height=\"8\" fill=\"%s\">", cx - 4, cy - 4,
                    color);
        fprintf(f, "<title>");
        if (p->point_labels) {
            xml_text(f, p->point_labels[i]);
            fputs(": ", f);
        }
        xml_text(f, which == 1 ? p->y1_name : p->y2_name);
        fprintf(f, " %.6g</title></%s>\n", y[i], which == 1 ? "circle" : "rect");
    }
}

int tool_plot_svg(const char *path, const tool_plot *p, symc_error *err) {
    if (p->n < 1) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "--plot: no points to draw"), 1;
    ir_out out; /* a regular file replaced whole, anything else written in place */
    if (ir_out_open(&out, path, err)) return 1;
    FILE *f = out.f;
    double xmin = p->x[0], xmax = p->x[0];
    for (int i = 1; i < p->n; i++) {
        if (p->x[i] < xmin) xmin = p->x[i];
        if (p->x[i] > xmax) xmax = p->x[i];
    }
    if (xmax <= xmin) xmin -= 1, xmax += 1; /* one point: centered */
    axis ax = {0, 0, nice_step(xmax - xmin, 6)};
    ax.lo = floor(xmin / ax.step + 1e-9) * ax.step;
    ax.hi = ceil(xmax / ax.step - 1e-9) * ax.step;
    axis a1 = y_axis(p->y1, p->n), a2 = y_axis(p->y2, p->n);
    double left = ML, right = W - MR, top = MT, bottom = H - MB;

    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H, W, H);
    fprintf(f, "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">", W / 2);
    xml_text(f, p->title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">", W / 2);
    xml_text(f, p->subtitle);
    fprintf(f, "</text>\n");
    /* grid and ticks */
    fprintf(f, "<g class=\"xticks\" stroke=\"#ddd\">\n");
    for (double v = ax.lo; v <= ax.hi + ax.step * 1e-6; v += ax.step)
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\"/>\n", px_x(&ax, v), top, px_x(&ax, v),
                bottom);
    fprintf(f, "</g>\n<g class=\"xlabels\" text-anchor=\"middle\">\n");
    for (double v = ax.lo; v <= ax.hi + ax.step * 1e-6; v += ax.step)
        fprintf(f, "<text x=\"%.2f\" y=\"%.0f\">%.6g</text>\n", px_x(&ax, v), bottom + 18, fabs(v) < 1e-12 ? 0 : v);
    fprintf(f, "</g>\n<g class=\"y1labels\" text-anchor=\"end\">\n");
    for (double v = a1.lo; v <= a1.hi + a1.step * 1e-6; v += a1.step)
        fprintf(f, "<text x=\"%.0f\" y=\"%.2f\">%.6g</text>\n", left - 8, px_y(&a1, v) + 4, v);
    fprintf(f, "</g>\n<g class=\"y2labels\" text-anchor=\"start\">\n");
    for (double v = a2.lo; v <= a2.hi + a2.step * 1e-6; v += a2.step)
        fprintf(f, "<text x=\"%.0f\" y=\"%.2f\">%.6g</text>\n", right + 8, px_y(&a2, v) + 4, v);
    fprintf(f, "</g>\n<g stroke=\"#eee\">\n");
    for (double v = a1.lo + a1.step; v <= a1.hi + a1.step * 1e-6; v += a1.step)
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\"/>\n", left, px_y(&a1, v), right,
                px_y(&a1, v));
    fprintf(f, "</g>\n");
    /* axes */
    fprintf(f,
            "<g stroke=\"#333\" stroke-width=\"1\">\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n"
            "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
            "y2=\"%.0f\"/>\n</g>\n",
            left, bottom, right, bottom, left, top, left, bottom, right, top, right, bottom);
    fprintf(f, "<text class=\"xlabel\" x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">", (left + right) / 2, H - 16);
    xml_text(f, p->x_label);
    fprintf(f,
            "</text>\n<text class=\"y1label\" transform=\"translate(20 %.0f) rotate(-90)\" text-anchor=\"middle\" "
            "fill=\"#1f77b4\">",
            (top + bottom) / 2);
    xml_text(f, p->y1_label);
    fprintf(f,
            "</text>\n<text class=\"y2label\" transform=\"translate(%d %.0f) rotate(90)\" text-anchor=\"middle\" "
            "fill=\"#d95f02\">",
            W - 20, (top + bottom) / 2);
    xml_text(f, p->y2_label);
    fprintf(f, "</text>\n");
    series(f, p, &ax, &a1, p->y1, 1);
    series(f, p, &ax, &a2, p->y2, 2);
    /* legend */
    fprintf(f,
            "<g class=\"legend\">\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#1f77b4\" "
            "stroke-width=\"2\"/>\n<text x=\"%.0f\" y=\"%.0f\">",
            left + 10, top + 14, left + 40, top + 14, left + 46, top + 18);
    xml_text(f, p->y1_name);
    fprintf(f,
            "</text>\n<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#d95f02\" stroke-width=\"2\" "
            "stroke-dasharray=\"6,4\"/>\n<text x=\"%.0f\" y=\"%.0f\">",
            left + 10, top + 32, left + 40, top + 32, left + 46, top + 36);
    xml_text(f, p->y2_name);
    fprintf(f, "</text>\n</g>\n</svg>\n");
    return ir_out_close(&out, err) ? 1 : 0;
}
