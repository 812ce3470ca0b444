// Migrations in order. Add a file NNN_name.sql and list it here; applied versions are never edited.
import initial from './001_initial.sql';
import memory from './002_memory.sql';
import memoryDedupe from './003_memory_dedupe.sql';
import sleep from './004_sleep.sql';
import sleepSteps from './005_sleep_steps.sql';
import graph from './006_graph.sql';
import entityProfiles from './007_entity_profiles.sql';
import edgePairs from './008_edge_pairs.sql';
import embeddings from './009_embeddings.sql';
import shownMemories from './010_shown_memories.sql';
import rollingSummary from './011_rolling_summary.sql';
import memoryTrgmDirect from './013_memory_trgm_direct.sql';
import trashOffRecord from './014_trash_off_record.sql';
import imports from './015_imports.sql';
import hiddenFromRecall from './016_hidden_from_recall.sql';
import importedHistory from './018_imported_history.sql';
import serverFacts from './019_server_facts.sql';
import structuredAnswers from './020_structured_answers.sql';
import charsPerToken from './022_chars_per_token.sql';
import versions from './023_versions.sql';
import messageImages from './024_message_images.sql';
import generationSettings from './025_generation_settings.sql';
import companionGreetings from './026_companion_greetings.sql';
import entityTrgmFastupdate from './028_entity_trgm_fastupdate.sql';
import devices from './030_devices.sql';
import memoryLookAlikeIndexes from './031_memory_look_alike_indexes.sql';
import graphMentionFunctions from './032_graph_mention_functions.sql';
import diaryForgotten from './033_diary_forgotten.sql';
import graphShortNameProbe from './034_graph_short_name_probe.sql';
import rollingSummaryForgotten from './036_rolling_summary_forgotten.sql';
import graphCountsApart from './037_graph_counts_apart.sql';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  { version: 1, name: 'initial', sql: initial },
  { version: 2, name: 'memory', sql: memory },
  { version: 3, name: 'memory_dedupe', sql: memoryDedupe },
  { version: 4, name: 'sleep', sql: sleep },
  { version: 5, name: 'sleep_steps', sql: sleepSteps },
  { version: 6, name: 'graph', sql: graph },
  { version: 7, name: 'entity_profiles', sql: entityProfiles },
  { version: 8, name: 'edge_pairs', sql: edgePairs },
  { version: 9, name: 'embeddings', sql: embeddings },
  { version: 10, name: 'shown_memories', sql: shownMemories },
  { version: 11, name: 'rolling_summary', sql: rollingSummary },
  { version: 13, name: 'memory_trgm_direct', sql: memoryTrgmDirect },
  { version: 14, name: 'trash_off_record', sql: trashOffRecord },
  { version: 15, name: 'imports', sql: imports },
  { version: 16, name: 'hidden_from_recall', sql: hiddenFromRecall },
  { version: 18, name: 'imported_history', sql: importedHistory },
  { version: 19, name: 'server_facts', sql: serverFacts },
  { version: 20, name: 'structured_answers', sql: structuredAnswers },
  { version: 22, name: 'chars_per_token', sql: charsPerToken },
  { version: 23, name: 'versions', sql: versions },
  { version: 24, name: 'message_images', sql: messageImages },
  { version: 25, name: 'generation_settings', sql: generationSettings },
  { version: 26, name: 'companion_greetings', sql: companionGreetings },
  { version: 28, name: 'entity_trgm_fastupdate', sql: entityTrgmFastupdate },
  { version: 30, name: 'devices', sql: devices },
  { version: 31, name: 'memory_look_alike_indexes', sql: memoryLookAlikeIndexes },
  { version: 32, name: 'graph_mention_functions', sql: graphMentionFunctions },
  { version: 33, name: 'diary_forgotten', sql: diaryForgotten },
  { version: 34, name: 'graph_short_name_probe', sql: graphShortNameProbe },
  { version: 36, name: 'rolling_summary_forgotten', sql: rollingSummaryForgotten },
  { version: 37, name: 'graph_counts_apart', sql: graphCountsApart },
];
