/**
 * The built-in toolset's name, apart from the toolset itself: the API's planner and the activities that
 * only name its tools need the name, not the tools (which load RE2 and the file and command code).
 */
export const developerToolsetName = 'developer';
