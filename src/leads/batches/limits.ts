/** The most leads one batch takes. */
export const MAX_BATCH_LEADS = 1000;
export const MAX_BATCH_NAME_LENGTH = 200;
/** The largest lead file taken: 1,000 leads with a CRM export's other columns fit with room to spare. */
export const MAX_LEAD_FILE_BYTES = 2 * 1024 * 1024;
/** How a lead file is read: the header and one lead more than a batch takes (enough to say a file has too many). */
export const LEAD_FILE_LIMITS = { maxRecords: MAX_BATCH_LEADS + 2, maxRecordBytes: 64 * 1024 };
