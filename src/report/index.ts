export { chartSvg, type Panel, type Series } from './charts.js';
export { writeReport, readMetrics, curve, type RunReport, type ReportTable, type WrittenReport } from './report.js';
